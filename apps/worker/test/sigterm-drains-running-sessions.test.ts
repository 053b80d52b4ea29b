import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { REDIS_URL, waitFor } from '@baton/test-support';
import { randomProjectId } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

describe('SIGTERM', () => {
  const world = useProcessWorld('baton-drain-');

  it('gives running sessions their end-of-session turn, leaves no active job or lock, and hands the project on', async () => {
    const { prefix, control, sim, workers, projects } = world;
    // Both processes share one BATON_HOME: a project without --repo keeps its code there.
    const env = simWorkerEnv(
      { prefix, simUrl: sim.url },
      { BATON_SHUTDOWN_GRACE_MS: '20000', BATON_HOME: world.home },
    );
    const first = await spawnWorker({ ...env, BATON_WORKER_ID: 'draining' });
    workers.push(first);
    const ids = [randomProjectId('drain'), randomProjectId('drain')];
    projects.push(...ids);
    for (const id of ids) {
      await control.createProject({ id, goal: 'Work\n- one\n- two\n- three' });
      await control.enqueue(id);
    }
    await waitFor('both inits done', async () => {
      const all = await Promise.all(ids.map((id) => control.getProject(id)));
      return all.every((project) => (project?.counters.sessions ?? 0) >= 1);
    });
    // Park each project's session in a model request mid-work (past its first turn, not yet in
    // its end-of-session turn: a session aborted before any turn has nothing to close, and one
    // already closing finishes as it would anyway), so the signal surely lands mid-work.
    sim.setFaults({ latencyMs: 400, stallNextWork: 2 });
    await sim.waitForStalled(2, 20_000);

    first.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const counts = await control.queueCounts();
      expect(counts.active).toBe(0);
      expect(await redis.keys(`${prefix}:baton-sessions:*:lock`)).toEqual([]);
      for (const id of ids) {
        expect(await redis.exists(control.keys.lease(id))).toBe(0);
        const project = await control.getProject(id);
        expect(project?.activeSession).toBeNull();
        expect(project?.status).toBe('queued');
        const last = (await control.listSessions(id)).at(-1);
        expect(last?.outcome).toBe('cancelled');
        expect(last?.workerId).toBe('draining');
        // The end-of-session phase ran after the abort.
        const events = await control.readEvents(id, { count: 10_000 });
        const endTurns = events.filter(
          (entry) =>
            entry.event.type === 'turn' &&
            entry.event.phase === 'end' &&
            entry.event.sessionId === last?.sessionId,
        );
        expect(endTurns.length).toBeGreaterThan(0);
      }
    } finally {
      redis.disconnect();
    }
    expect(first.logs.some((line) => line.msg === 'worker closed' && line.drained === true)).toBe(
      true,
    );

    sim.setFaults({});
    sim.releaseStalls();
    const second = await spawnWorker({ ...env, BATON_WORKER_ID: 'next' });
    workers.push(second);
    await waitFor(
      'both projects completed elsewhere',
      async () => {
        const all = await Promise.all(ids.map((id) => control.getProject(id)));
        return all.every((project) => project?.status === 'completed');
      },
      60_000,
    );
  });
});
