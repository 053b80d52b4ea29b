/**
 * A worker process upgrades what an earlier Baton stored in Redis before it takes a job
 * (`runRedisMigrations`), and refuses to start on data a newer Baton migrated. On a Redis server
 * of the test's own: the memory migration scans every namespace of the default memory prefix.
 */
import { startModelSim, type ModelSim } from '@baton/model-sim';
import { REDIS_MIGRATIONS, createBatonControl, type BatonControl } from '@baton/projects';
import { startRedisServer, type RedisServer } from '@baton/test-support';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomPrefix } from './support/redis.js';
import {
  simWorkerEnv,
  spawnWorker,
  stopAll,
  type WorkerProcess,
} from './support/worker-process.js';

describe('worker start runs the Redis data migrations', () => {
  let redis: RedisServer;
  let admin: Redis;
  let sim: ModelSim;
  let control: BatonControl;
  let prefix: string;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    redis = await startRedisServer();
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    sim = await startModelSim({ port: 0 });
    prefix = randomPrefix();
    control = createBatonControl({ url: redis.url, prefix });
  });

  afterEach(async () => {
    await stopAll(workers);
    await control.close();
    admin.disconnect();
    await sim.close();
    await redis.stop();
  });

  it("indexes an earlier version's projects before taking jobs, once", async () => {
    // Paused: the worker has nothing to run, so the test sees only its start.
    await control.createProject({ id: 'from-before', goal: 'Stored by an earlier Baton' });
    await control.pause('from-before');
    // What an earlier version kept: the creation-time set and the hash, no paged index.
    await admin.del(...(await admin.keys(`${prefix}:projects:*`)));
    // Nor any record of migrations (creating on a fresh prefix recorded them all as applied).
    await admin.del(control.keys.migrations);
    expect((await control.pageProjects({})).projects).toEqual([]);

    const worker = await spawnWorker(
      simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: redis.url }),
    );
    workers.push(worker);
    const migrated = worker.logs.find((line) => line.msg === 'Redis data migrated');
    expect(migrated?.migrations).toEqual(REDIS_MIGRATIONS.map((migration) => migration.id));
    expect((await control.pageProjects({})).projects.map((project) => project.id)).toEqual([
      'from-before',
    ]);

    const second = await spawnWorker(
      simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: redis.url }),
    );
    workers.push(second);
    expect(second.logs.some((line) => line.msg === 'Redis data migrated')).toBe(false);
  });

  it('refuses to start, in one line, on data a newer Baton migrated', async () => {
    await admin.hset(`${prefix}:migrations`, '2099-01-01-from-a-newer-baton', 'x');
    const refused = await spawnWorker(
      simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: redis.url }),
      { waitStarted: false },
    );
    workers.push(refused);
    expect(await refused.exited).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      `baton worker: Redis (prefix ${prefix}) holds data migrated by a newer Baton (migration 2099-01-01-from-a-newer-baton): upgrade this Baton to the version the other workers run (docs/operations.md#upgrading)`,
    ]);
    expect(refused.logs.some((line) => line.msg === 'worker started')).toBe(false);
    // Nothing ran: the earlier migrations are still pending.
    expect(await admin.hkeys(`${prefix}:migrations`)).toEqual(['2099-01-01-from-a-newer-baton']);
  });
});
