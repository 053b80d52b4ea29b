import { describe, expect, it } from 'vitest';
import { waitFor } from '@baton/test-support';
import { randomProjectId } from './support/redis.js';
import { privateRedisOf, simWorld } from './support/sim-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

describe('Redis restarts in the middle of a run', () => {
  // AOF fsynced on every write, so the restart below loses nothing.
  const world = simWorld({ privateRedis: { appendOnly: true }, tempPrefix: 'baton-restart-' });

  it('the worker reconnects and the projects complete', async () => {
    const { sim, control, prefix, url } = world;
    const redis = privateRedisOf(world);
    const worker = world.closeAfter(
      await spawnWorker(
        simWorkerEnv(
          { prefix, simUrl: sim.url, redisUrl: url },
          { BATON_RETRY_DELAY_MS: '200', BATON_MAX_FAILURES: '5' },
        ),
      ),
    );
    const ids = [randomProjectId('restart'), randomProjectId('restart')];
    for (const id of ids) {
      await control.createProject({ id, goal: 'Survive\n- one\n- two\n- three' });
      await control.enqueue(id);
    }
    sim.setFaults({ latencyMs: 100 });
    await waitFor('first sessions done', async () => {
      const all = await Promise.all(ids.map((id) => control.getProject(id)));
      return all.every((project) => (project?.counters.sessions ?? 0) >= 1);
    });

    // SIGTERM: a clean shutdown (Redis flushes the AOF); restart() starts it on the same port.
    await redis.kill('SIGTERM');
    // Down long enough for commands to fail and connections to drop, short of the lock duration.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await redis.restart();

    await waitFor(
      'every project completed after the restart',
      async () => {
        const all = await Promise.all(ids.map((id) => control.getProject(id)));
        const failed = all.find((project) => project?.status === 'failed');
        if (failed) throw new Error(`${failed.id} failed: ${failed.statusReason}`);
        return all.every((project) => project?.status === 'completed');
      },
      90_000,
      200,
    );
    for (const id of ids) {
      const store = await control.memoryStore(id);
      const features = JSON.parse((await store.read('features.json')) ?? '[]') as {
        passes: boolean;
      }[];
      expect(features.every((feature) => feature.passes)).toBe(true);
    }
    expect(worker.child.exitCode).toBeNull();
  });
});
