import { describe, expect, it } from 'vitest';
import { waitFor } from '@baton/test-support';
import { startSimWorker } from './support/in-process-worker.js';
import { randomProjectId } from './support/redis.js';
import { simWorld } from './support/sim-world.js';

describe('a worker pauses a project whose sessions stop making progress', () => {
  const world = simWorld({ tempPrefix: 'baton-stall-' });
  const { projects } = world;

  it('after N resume sessions without a newly passing feature: paused, reason no_progress, a status event, and a resume starts the count again', async () => {
    await startSimWorker(world, {
      sessionOptions: () => ({
        retry: { maxRetries: 1, baseDelayMs: 10 },
        endOfSessionMaxTurns: 1,
      }),
    });
    const id = randomProjectId('stall');
    projects.push(id);
    // Three turns per session: the agent reads its memory and never reaches a flip.
    await world.control.createProject({
      id,
      goal: 'Two things\n- first\n- second',
      budgets: { maxSessionsWithoutProgress: 2, session: { maxTurns: 3 } },
    });
    await world.control.enqueue(id);
    await waitFor(
      'paused',
      async () => (await world.control.getProject(id))?.status === 'paused',
      60_000,
    );

    const project = (await world.control.getProject(id))!;
    expect(project.statusReason).toMatch(
      /^no_progress: 2 sessions in a row without a newly passing feature \(0 of 2 pass\)/,
    );
    expect(project.counters.sessions).toBe(3); // init + 2 resumes
    expect(project.counters.sessionsWithoutProgress).toBe(2);
    const events = await world.control.readEvents(id, { count: 10_000 });
    const paused = events.flatMap(({ event }) =>
      event.type === 'project-status' && event.to === 'paused' ? [event] : [],
    );
    expect(paused).toHaveLength(1);
    expect(String(paused[0]?.reason)).toMatch(/^no_progress: /);

    // A user's resume starts the streak again: two more sessions before the next pause.
    await world.control.resume(id);
    await waitFor(
      'paused again',
      async () => {
        const again = await world.control.getProject(id);
        return again?.status === 'paused' && again.counters.sessions === 5;
      },
      60_000,
    );
  });
});
