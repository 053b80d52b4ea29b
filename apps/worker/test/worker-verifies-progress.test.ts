import { verifyWebhookSignature } from '@baton/projects';
import { describe, expect, it } from 'vitest';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { spawnWebhookWorker, useProcessWorld } from './support/process-world.js';

const SECRET = 'whsec-verify-test';

describe('a worker process verifies progress', () => {
  const world = useProcessWorld('baton-verify-');

  it('refuses a false claim, catches a regression (feature.regressed webhook), and completes on evidence kept in Redis', async () => {
    const { control, projects } = world;
    const receiver = await spawnWebhookWorker(world, SECRET);
    const id = randomProjectId('verify');
    projects.push(id);
    await control.createProject({
      id,
      goal: 'Todo app.\n- Add a todo [sim:claim-first]\n- List todos\n- Mark done [sim:breaks F1]',
    });
    await control.enqueue(id);
    const done = await waitForCompleted(control, id, 240_000);
    expect(done.counters).toMatchObject({
      featuresPassing: 3,
      featuresVerified: 3,
      featuresClaimed: 0,
      featuresRegressed: 0,
    });

    const events = (await control.readEvents(id, { count: 10_000 })).map((entry) => entry.event);
    const f1 = events.flatMap((event) =>
      (event.type === 'check-failed' || event.type === 'check-passed') &&
      event.evidence.featureId === 'F1'
        ? [event]
        : [],
    );
    expect(f1[0]).toMatchObject({ type: 'check-failed', evidence: { trigger: 'flip' } });
    expect(events.find((event) => event.type === 'feature-regressed')).toMatchObject({
      featureId: 'F1',
    });

    // The record is in Redis: any process (this test's control) reads the evidence.
    const checks = await control.readChecks(id);
    expect(Object.keys(checks).sort()).toEqual(['F1', 'F2', 'F3']);
    for (const state of Object.values(checks)) {
      expect(state).toMatchObject({
        status: 'verified',
        evidence: { passed: true, commit: done.lastCheckpoint },
      });
    }

    const bodies = (await receiver.received(2)).map((request) => {
      expect(
        verifyWebhookSignature(
          request.rawBody,
          SECRET,
          request.headers['x-baton-signature'] as string | undefined,
        ),
      ).toBe(true);
      return JSON.parse(request.rawBody) as Record<string, unknown>;
    });
    expect(bodies.find((body) => body.type === 'feature.regressed')).toMatchObject({
      project: { id },
      feature: { id: 'F1', check: expect.stringContaining('features/f1.sh') as unknown },
    });
    expect(bodies.find((body) => body.type === 'project.completed')).toMatchObject({
      project: {
        id,
        features: { passing: 3, total: 3, verified: 3, claimed: 0, regressed: 0 },
      },
    });
  }, 300_000);
});
