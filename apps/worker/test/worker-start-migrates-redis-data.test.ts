/**
 * A worker process upgrades what an earlier Baton stored in Redis before it takes a job
 * (`runRedisMigrations`), and refuses to start on data a newer Baton migrated. On a Redis server
 * of the test's own: the memory migration scans every namespace of the default memory prefix.
 */
import { createBatonControl, createKeys, REDIS_MIGRATIONS } from '@baton/projects';
import { describe, expect, it } from 'vitest';
import { adminOf, simWorld } from './support/sim-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

describe('worker start runs the Redis data migrations', () => {
  // A Redis of the test's own: the memory migration scans every namespace of the default prefix.
  const world = simWorld({ privateRedis: true });

  it("indexes an earlier version's projects before taking jobs, once", async () => {
    const { sim, control, prefix, url } = world;
    const admin = adminOf(world);
    // Paused: the worker has nothing to run, so the test sees only its start.
    await control.createProject({ id: 'from-before', goal: 'Stored by an earlier Baton' });
    await control.pause('from-before');
    // What an earlier version kept: the creation-time set and the hash, no paged index.
    await admin.del(...(await admin.keys(`${prefix}:projects:*`)));
    // Nor any record of migrations (creating on a fresh prefix recorded them all as applied).
    await admin.del(control.keys.migrations);
    expect((await control.pageProjects({})).projects).toEqual([]);

    const worker = await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: url }));
    world.closeAfter(worker);
    const migrated = worker.logs.find((line) => line.msg === 'Redis data migrated');
    expect(migrated?.migrations).toEqual(REDIS_MIGRATIONS.map((migration) => migration.id));
    expect((await control.pageProjects({})).projects.map((project) => project.id)).toEqual([
      'from-before',
    ]);

    const second = await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: url }));
    world.closeAfter(second);
    expect(second.logs.some((line) => line.msg === 'Redis data migrated')).toBe(false);
  });

  it('says in one JSON warning line which memory the memory-prefix migration left where it was', async () => {
    const { sim, url } = world;
    const admin = adminOf(world);
    // A deployment with its own prefix holds project w, and so does the default one ({baton}):
    // the memory an earlier Baton kept under baton:{w}: stays the default deployment's.
    const prefix = '{x}';
    const custom = createBatonControl({ url, prefix });
    world.closeAfter(custom);
    await custom.createProject({ id: 'w', goal: 'Kept by two deployments' });
    await custom.pause('w');
    // Creating on a fresh prefix recorded every migration as applied: an earlier Baton did not.
    await admin.del(custom.keys.migrations);
    await admin.hset(createKeys('{baton}').project('w'), 'id', 'w');
    await admin.hset('baton:{w}:meta', 'bytes', '0', 'files', '0');

    const worker = await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: url }));
    world.closeAfter(worker);
    const warnings = worker.logs.filter((line) => line.migration === '2026-12-04-memory-prefix');
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        migration: '2026-12-04-memory-prefix',
        projects: ['w'],
        msg: 'memory of 1 project(s) of BATON_PREFIX {x} was not moved to x:{<id>}: w: the deployment with BATON_PREFIX {baton} holds a project of the same id and keeps its memory under baton:{<id>}. Those projects continue with what is under x:{<id>} (docs/operations.md#memory-keys-follow-baton_prefix)',
      }),
    ]);
    expect(worker.logs.find((line) => line.msg === 'Redis data migrated')?.migrations).toContain(
      '2026-12-04-memory-prefix',
    );
    // Nothing moved: the default deployment keeps reading it where it is.
    expect(await admin.exists('baton:{w}:meta', 'x:{w}:meta')).toBe(1);
    expect(await admin.hget('baton:{w}:meta', 'bytes')).toBe('0');
  });

  it('refuses to start, in one line, on data a newer Baton migrated', async () => {
    const { sim, prefix, url } = world;
    const admin = adminOf(world);
    await admin.hset(`${prefix}:migrations`, '2099-01-01-from-a-newer-baton', 'x');
    const refused = await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: url }), {
      waitStarted: false,
    });
    world.closeAfter(refused);
    expect(await refused.exited).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      `baton worker: Redis (prefix ${prefix}) holds data migrated by a newer Baton (migration 2099-01-01-from-a-newer-baton): upgrade this Baton to the version the other workers run (docs/operations.md#upgrading)`,
    ]);
    expect(refused.logs.some((line) => line.msg === 'worker started')).toBe(false);
    // Nothing ran: the earlier migrations are still pending.
    expect(await admin.hkeys(`${prefix}:migrations`)).toEqual(['2099-01-01-from-a-newer-baton']);
  });
});
