import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { REDIS_URL, waitFor } from '@baton/test-support';
import { SESSION_QUEUE_NAME, type EventEntry, type SessionJobData } from '@baton/projects';
import { randomProjectId } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

/** Walks a project's stream in order; returns every place two sessions were open at once. */
export function overlappingSessions(entries: readonly EventEntry[]): string[] {
  const problems: string[] = [];
  let open: string | null = null;
  for (const { id, event } of entries) {
    if (event.type === 'session-start') {
      if (open !== null)
        problems.push(`${id}: session ${String(event.sessionId)} started while ${open} was open`);
      open = String(event.sessionId);
    } else if (event.type === 'session-end') {
      if (open !== event.sessionId)
        problems.push(`${id}: session ${String(event.sessionId)} ended but ${open} was open`);
      open = null;
    }
  }
  return problems;
}

describe('three workers, ten projects, duplicate jobs for every session', () => {
  const world = useProcessWorld('baton-contention-');

  it('never runs two sessions of one project at once and completes every project', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const env = simWorkerEnv(
      { prefix, simUrl: sim.url },
      // One BATON_HOME for the three: projects without --repo keep their code in it.
      { BATON_CONCURRENCY: '4', LOG_LEVEL: 'warn', BATON_HOME: world.home },
    );
    workers.push(
      ...(await Promise.all(
        ['a', 'b', 'c'].map((name) =>
          spawnWorker({ ...env, BATON_WORKER_ID: name, LOG_LEVEL: 'info' }),
        ),
      )),
    );

    const ids = Array.from({ length: 10 }, (_, index) => randomProjectId(`c${index}`));
    projects.push(...ids);
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const queue = new Queue<SessionJobData>(SESSION_QUEUE_NAME, { connection, prefix });
    try {
      for (const id of ids) {
        const project = await control.createProject({ id, goal: `Project ${id}\n- alpha\n- beta` });
        // The normal job plus four rogue copies of session 1 under other ids: five jobs race for
        // one project on three workers. Only the lease keeps them apart.
        await control.enqueue(id);
        for (let copy = 0; copy < 4; copy += 1) {
          await queue.add(
            'rogue',
            { projectId: id, sessionNumber: 1, reason: 'enqueue', generation: project.createdAt },
            { jobId: `${id}-rogue-${copy}` },
          );
        }
        await control.resume(id).catch(() => undefined);
      }

      await waitFor(
        'every project completed',
        async () => {
          const all = await Promise.all(ids.map((id) => control.getProject(id)));
          const failed = all.find((project) => project?.status === 'failed');
          if (failed) throw new Error(`${failed.id} failed: ${failed.statusReason}`);
          return all.every((project) => project?.status === 'completed');
        },
        200_000,
        200,
      );
    } finally {
      await queue.close();
      connection.disconnect();
    }

    const workersUsed = new Set<string>();
    for (const id of ids) {
      const entries = await control.readEvents(id, { count: 100_000 });
      expect(overlappingSessions(entries), id).toEqual([]);
      const project = await control.getProject(id);
      expect(project?.counters.featuresPassing).toBe(2);
      // init + two resumes: the rogue copies never ran a session of their own.
      expect(project?.counters.sessions).toBe(3);
      for (const entry of entries) {
        if (entry.event.type === 'session-claimed') workersUsed.add(String(entry.event.workerId));
      }
    }
    expect(workersUsed.size).toBeGreaterThan(1);
  }, 240_000);
});
