import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startModelSim, type ModelSim } from '@baton/model-sim';
import { startRedisServer, waitFor, type RedisServer } from '@baton/test-support';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomPrefix } from './support/redis.js';
import {
  simWorkerEnv,
  spawnWorker,
  stopAll,
  type WorkerProcess,
} from './support/worker-process.js';

async function readyz(port: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Waits until `/readyz` answers 503 (the worker re-checks Redis every 5 s) and returns it. */
function readyzFails(port: number): Promise<{ status: number; body: Record<string, unknown> }> {
  return waitFor(
    '/readyz to fail',
    async () => {
      const probe = await readyz(port);
      return probe.status === 503 ? probe : null;
    },
    15_000,
  );
}

describe('a Redis that can lose data is refused or reported, never used silently', () => {
  let redis: RedisServer;
  let admin: Redis;
  let sim: ModelSim;
  const workers: WorkerProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    redis = await startRedisServer();
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    // The restart test takes this Redis away for a moment.
    admin.on('error', () => undefined);
    sim = await startModelSim({ port: 0 });
  });

  afterEach(async () => {
    await stopAll(workers);
    admin.disconnect();
    await sim.close();
    await redis.stop();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  const env = (extra: Record<string, string> = {}) =>
    simWorkerEnv({ prefix: randomPrefix(), simUrl: sim.url, redisUrl: redis.url }, extra);

  it('refuses to start on an evicting policy with one JSON line naming the fix; BATON_ALLOW_EVICTION=1 starts with a warning', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const refused = await spawnWorker(env(), { waitStarted: false });
    workers.push(refused);
    expect(await refused.exited).toBe(2);
    const errors = refused.logs.filter((line) => line.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ maxmemoryPolicy: 'allkeys-lru' });
    expect(String(errors[0]?.msg)).toContain('CONFIG SET maxmemory-policy noeviction');
    expect(String(errors[0]?.msg)).toContain('BATON_ALLOW_EVICTION=1');
    expect(refused.logs.some((line) => line.msg === 'worker started')).toBe(false);

    const allowed = await spawnWorker(env({ BATON_ALLOW_EVICTION: '1' }));
    workers.push(allowed);
    expect(
      allowed.logs.some(
        (line) => line.level === 40 && line.maxmemoryPolicy === 'allkeys-lru' && line.allowEviction,
      ),
    ).toBe(true);
    expect((await readyz(allowed.httpPort)).status).toBe(200);
  });

  it('/readyz fails with the reason when the policy changes while the worker runs, and recovers', async () => {
    const worker = await spawnWorker(env());
    workers.push(worker);
    expect((await readyz(worker.httpPort)).status).toBe(200);
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    const notReady = await readyzFails(worker.httpPort);
    expect(String(notReady.body.reason)).toContain('volatile-lru');
    await worker.waitForLog((line) => line.level === 50 && line.maxmemoryPolicy === 'volatile-lru');
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await waitFor(
      '/readyz to recover',
      async () => (await readyz(worker.httpPort)).status === 200,
      15_000,
    );
  });

  it('a Redis wiped under a running worker is reported (log and /readyz), and again by the worker that restarts on it', async () => {
    // A home of the test's own: the worker that starts again must find what the first one kept.
    const home = await mkdtemp(path.join(os.tmpdir(), 'baton-wiped-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    const workerEnv = env({ BATON_HOME: home });
    const worker = await spawnWorker(workerEnv);
    workers.push(worker);
    // Restarted without persistence: the data, deployment marker included, is gone.
    await redis.restart();
    const lost = await worker.waitForLog(
      (line) => line.level === 50 && String(line.msg).startsWith('Redis lost its data'),
    );
    expect(String(lost.msg)).toContain('refs/heads/baton/*');
    const notReady = await readyzFails(worker.httpPort);
    expect(String(notReady.body.reason)).toContain('Redis lost its data');
    worker.kill('SIGTERM');
    await worker.exited;

    // The same machine (BATON_HOME) starting again on the empty Redis says what happened once.
    const again = await spawnWorker(workerEnv);
    workers.push(again);
    expect(
      again.logs.some(
        (line) => line.level === 50 && String(line.msg).startsWith('Redis lost its data'),
      ),
    ).toBe(true);
    expect((await readyz(again.httpPort)).status).toBe(200);
  });
});
