import { startModelSim, type ModelSim } from '@baton/model-sim';
import { createBatonControl, type BatonControl } from '@baton/projects';
import { startRedisServer, waitFor, type RedisServer } from '@baton/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomPrefix, randomProjectId } from './support/redis.js';
import {
  simWorkerEnv,
  spawnWorker,
  stopAll,
  type WorkerProcess,
} from './support/worker-process.js';

describe('bounded shutdown', () => {
  let redis: RedisServer;
  let sim: ModelSim;
  let control: BatonControl;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    redis = await startRedisServer();
    // Every model request hangs: the session is mid-work when Redis goes away.
    sim = await startModelSim({ port: 0, faults: { stallOn: [1, 2, 3, 4, 5, 6] } });
    control = createBatonControl({ url: redis.url, prefix: randomPrefix() });
  });

  afterEach(async () => {
    await stopAll(workers);
    await control.close();
    await sim.close();
    await redis.stop();
  });

  it('SIGTERM ends the worker within its grace while Redis is down, with a session running', async () => {
    const graceMs = 2_000;
    const worker = await spawnWorker(
      simWorkerEnv(
        { prefix: control.keys.prefix, simUrl: sim.url, redisUrl: redis.url },
        { BATON_SHUTDOWN_GRACE_MS: String(graceMs) },
      ),
    );
    workers.push(worker);
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
