import { verifyWebhookSignature } from '@baton/projects';
import { waitFor, type WebhookReceiver } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { randomProjectId } from './support/redis.js';
import { spawnWebhookWorker, useProcessWorld } from './support/process-world.js';

const SECRET = 'whsec-pause-test';

function body(receiver: WebhookReceiver, index: number): Record<string, unknown> {
  const request = receiver.requests[index]!;
  expect(
    verifyWebhookSignature(
      request.rawBody,
      SECRET,
      request.headers['x-baton-signature'] as string | undefined,
    ),
  ).toBe(true);
  return JSON.parse(request.rawBody) as Record<string, unknown>;
}

describe('a worker process tells webhook receivers why a project paused', () => {
  const world = useProcessWorld('baton-pause-hooks-');

  it('a stalled project is project.paused with reason no_progress; an operator pause is project.paused with its own reason', async () => {
    const { control, projects } = world;
    const receiver = await spawnWebhookWorker(world, SECRET);

    // Three turns per session: the agent reads its memory and never reaches a flip.
    const stalled = randomProjectId('stall-hook');
    projects.push(stalled);
    await control.createProject({
      id: stalled,
      goal: 'Two things\n- first\n- second',
      budgets: { maxSessionsWithoutProgress: 1, session: { maxTurns: 3 } },
    });
    await control.enqueue(stalled);
    await receiver.received(1);
    expect(body(receiver, 0)).toMatchObject({
      type: 'project.paused',
      project: {
        id: stalled,
        status: 'paused',
        reason: expect.stringMatching(/^no_progress: 1 session/) as unknown,
        features: { passing: 0, total: 2 },
      },
    });

    // Created and queued but never started: the operator's pause reaches receivers too.
    const held = randomProjectId('held-hook');
    projects.push(held);
    await control.createProject({ id: held, goal: '- one' });
    await control.pause(held);
    await receiver.received(2);
    expect(body(receiver, 1)).toMatchObject({
      type: 'project.paused',
      project: { id: held, status: 'paused' },
    });
    const reason = (body(receiver, 1).project as { reason: string }).reason;
    expect(reason).toBe((await control.getProject(held))?.statusReason);
    expect(reason).not.toMatch(/^no_progress|^budget/);
    await waitFor(
      'both deliveries recorded',
      async () =>
        (await control.listWebhookDeliveries(stalled)).length === 1 &&
        (await control.listWebhookDeliveries(held)).length === 1,
      20_000,
    );
  });
});
