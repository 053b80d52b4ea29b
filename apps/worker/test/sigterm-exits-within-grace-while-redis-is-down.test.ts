import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { randomProjectId } from './support/redis.js';
import { privateRedisOf, simWorld } from './support/sim-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

describe('bounded shutdown', () => {
  // Every model request hangs: the session is mid-work when Redis goes away.
  const world = simWorld({ privateRedis: true, sim: { faults: { stallOn: [1, 2, 3, 4, 5, 6] } } });

  it('SIGTERM ends the worker within its grace while Redis is down, with a session running', async () => {
    const { sim, control, prefix, url } = world;
    const redis = privateRedisOf(world);
    const graceMs = 2_000;
    const worker = world.closeAfter(
      await spawnWorker(
        simWorkerEnv(
          { prefix, simUrl: sim.url, redisUrl: url },
          { BATON_SHUTDOWN_GRACE_MS: String(graceMs) },
        ),
      ),
    );
    const id = randomProjectId('down');
    await control.createProject({ id, goal: 'Greet\n- hello' });
    await control.enqueue(id);
    await sim.waitForStalled(1, 30_000);

    await redis.kill('SIGKILL');
    await waitFor('the worker to notice Redis is gone', async () => {
      const response = await fetch(`http://127.0.0.1:${worker.httpPort}/readyz`);
      return response.status === 503;
    });

    const signalled = Date.now();
    worker.kill('SIGTERM');
    const code = await worker.exited;
    const tookMs = Date.now() - signalled;
    // The grace, plus a bounded close of the connections (BATON_SHUTDOWN_GRACE_MS documents it).
    expect(tookMs).toBeLessThan(graceMs + 5_000);
    // Not drained: the session is left for resume, which the exit code says.
    expect(code).toBe(1);
    expect(worker.logs.some((line) => line.msg === 'worker closed' && line.drained === false)).toBe(
      true,
    );
  });
});
