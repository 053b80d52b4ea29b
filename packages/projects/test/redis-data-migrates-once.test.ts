/**
 * What an earlier Baton stored in Redis is upgraded once, by `runRedisMigrations` (run at
 * `baton up` and worker start), and the readers assume the current shape. The old shapes are
 * written here raw, as an earlier version left them.
 */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { deletePrefix, randomHex, REDIS_URL } from '@baton/test-support';
import { createRedisMemoryStore, type RedisMemoryStore } from '@baton/storage-redis';
import {
  REDIS_MIGRATIONS,
  createKeys,
  createSessionQueue,
  sessionJobId,
  isProjectError,
  readMigrationState,
  runRedisMigrations,
} from '../src/index.js';
import { scripts } from '../src/internal/scripts.js';
import { SCRIPT_STATUS } from '../src/internal/status.js';
import { proxied, useControlWorld, type RealCommand } from './support/redis.js';

const ALL_IDS = REDIS_MIGRATIONS.map((migration) => migration.id);

describe('Redis data migrations', () => {
  const world = useControlWorld();

  /** Projects as an earlier version stored them, with a memory file of the earlier layout. */
  async function storeTheOldWay(legacyMemoryPrefix: string): Promise<{
    ids: string[];
    memory: RedisMemoryStore;
  }> {
    const ids = ['old-a', 'old-b', 'old-c'];
    for (const id of ids) await world.control.createProject({ id, goal: `Old goal ${id}` });
    // Session jobs queued before jobs named their project's generation: one of a project Redis
    // has, one of a project it lost.
    const queue = createSessionQueue({ connection: world.redis, keys: world.control.keys });
    try {
      await world.control.enqueue('old-a');
      const job = await queue.getJob(sessionJobId('old-a', 1));
      await job?.updateData({ projectId: 'old-a', sessionNumber: 1, reason: 'enqueue' } as never);
      await queue.add(
        'chain',
        { projectId: 'gone-a', sessionNumber: 3, reason: 'chain' } as never,
        {
          jobId: sessionJobId('gone-a', 3),
          delay: 3_600_000,
        },
      );
    } finally {
      await queue.close();
    }
    // No paged index: an earlier version kept only the creation-time set and the hashes.
    const indexKeys = await world.redis.keys(`${world.prefix}:projects:*`);
    await world.redis.del(...indexKeys);
    // Nor any record of migrations (creating on a fresh prefix recorded them all as applied).
    await world.redis.del(world.control.keys.migrations);
    // No context config in the stored config: that project ran its preset alone.
    const projectKey = world.control.keys.project('old-a');
    const config = JSON.parse((await world.redis.hget(projectKey, 'config')) ?? '{}') as Record<
      string,
      unknown
    >;
    delete config.context;
    await world.redis.hset(
      projectKey,
      'config',
      JSON.stringify({ ...config, contextPreset: 'long' }),
    );
    // A config from before the workspace, repository, model, budget, preset, hook and adoption
    // fields were kept: only its goal and context.
    const bare = world.control.keys.project('old-c');
    const stored = JSON.parse((await world.redis.hget(bare, 'config')) ?? '{}') as {
      goal: string;
      context: unknown;
    };
    await world.redis.hset(
      bare,
      'config',
      JSON.stringify({ goal: stored.goal, context: stored.context }),
    );
    // Summaries stored before the flip hash existed (the list only).
    for (const [number, flipped] of [
      [1, ['F1']],
      [2, ['F2']],
      [3, ['F1']],
    ] as const) {
      await world.redis.rpush(
        world.control.keys.sessions('old-b'),
        JSON.stringify({
          sessionId: `s${number}`,
          sessionNumber: number,
          flippedFeatures: flipped,
        }),
      );
    }
    // A memory file whose content is in its hash's `c` field, with no body key.
    const memory = createRedisMemoryStore({
      url: REDIS_URL,
      prefix: legacyMemoryPrefix,
      namespace: 'old-c',
    });
    await memory.write('progress.md', '## Session 1\nold layout', { mode: 'create' });
    const body = await world.redis.get(memory.keys.body('progress.md'));
    await world.redis
      .multi()
      .del(memory.keys.body('progress.md'))
      .hset(
        memory.keys.file('progress.md'),
        'c',
        '## Session 1\nold layout',
        'v',
        body?.slice(0, 40).trimEnd() ?? '',
      )
      .exec();
    return { ids, memory };
  }

  it('upgrades what an earlier version stored, and the readers see it afterwards', async () => {
    // Where earlier versions kept every deployment's memory (`baton` outside tests).
    const legacyMemoryPrefix = `bt-${randomHex(5)}`;
    const { ids, memory } = await storeTheOldWay(legacyMemoryPrefix);
    const fresh = (prefix = world.control.keys.memoryPrefix) =>
      createRedisMemoryStore({ url: REDIS_URL, prefix, namespace: 'old-c' });
    try {
      // The readers have no fallbacks any more: before the migrations, none of it shows.
      expect((await world.control.pageProjects({ sort: 'id', order: 'asc' })).projects).toEqual([]);
      // Nor defaults for fields an earlier version did not store.
      const bareBefore = await world.control.getProject('old-c');
      expect(bareBefore?.contextPreset).toBeUndefined();
      expect(bareBefore?.workspace).toBeUndefined();
      expect(await world.repository.featureFlips('old-b')).toEqual(new Map());
      const before = fresh();
      expect(await before.read('progress.md')).toBeNull();
      await before.close();
      expect(await readMigrationState(world.redis, world.control.keys)).toEqual({
        pending: ALL_IDS,
        unknown: [],
      });

      const ran = await runRedisMigrations({
        redis: world.redis,
        keys: world.control.keys,
        legacyMemoryPrefix,
      });
      expect(ran).toEqual(ALL_IDS);

      const page = await world.control.pageProjects({
        sort: 'id',
        order: 'asc',
        search: 'OLD GOAL',
      });
      expect(page.projects.map((project) => project.id)).toEqual(ids);
      expect((await world.control.countProjects()).counts.queued).toBe(3);
      expect((await world.control.getProject('old-a'))?.context).toEqual({ preset: 'long' });
      const queue = createSessionQueue({ connection: world.redis, keys: world.control.keys });
      try {
        const stamped = await queue.getJob(sessionJobId('old-a', 1));
        expect(stamped?.data.generation).toBe((await world.control.getProject('old-a'))?.createdAt);
        // A job of a project Redis lost gets none: workers refuse it.
        expect((await queue.getJob(sessionJobId('gone-a', 3)))?.data.generation).toBeUndefined();
      } finally {
        await queue.close();
      }
      // What the absence of each field meant, written into the config once.
      expect(await world.control.getProject('old-c')).toMatchObject({
        workspace: null,
        adoptWorkspace: false,
        model: null,
        fallbackModel: null,
        budgets: {},
        contextPreset: 'coding',
        repo: null,
        base: null,
        baseCommit: null,
        branch: 'baton/old-c',
        skipHooks: false,
      });
      // A config that had them all is left as it was.
      expect((await world.control.getProject('old-b'))?.workspace).toBeNull();
      expect(await world.repository.featureFlips('old-b')).toEqual(
        new Map([
          ['F1', { sessionNumber: 3, sessionId: 's3' }],
          ['F2', { sessionNumber: 2, sessionId: 's2' }],
        ]),
      );
      // Moved to a body, then to this deployment's memory prefix (the world's is not `{baton}`).
      const after = fresh();
      expect(await after.read('progress.md')).toBe('## Session 1\nold layout');
      await after.close();
      const left = fresh(legacyMemoryPrefix);
      expect(await left.read('progress.md')).toBeNull();
      await left.close();
      expect(await world.redis.hkeys(world.control.keys.migrations)).toEqual(ALL_IDS);
      // Run once: a second start finds nothing pending.
      expect(
        await runRedisMigrations({
          redis: world.redis,
          keys: world.control.keys,
          legacyMemoryPrefix,
        }),
      ).toEqual([]);
    } finally {
      await memory.close();
      await deletePrefix(`${legacyMemoryPrefix}:`);
    }
  });

  it('refuses, running nothing, when Redis holds a migration this version does not know', async () => {
    await world.control.createProject({ id: 'newer', goal: 'from the future' });
    await world.redis.del(world.control.keys.migrations);
    await world.redis.hset(world.control.keys.migrations, '2099-01-01-from-a-newer-baton', 'x');
    const refusal = await runRedisMigrations({
      redis: world.redis,
      keys: world.control.keys,
      legacyMemoryPrefix: `bt-${randomHex(5)}`,
    }).catch((error: unknown) => error);
    expect(isProjectError(refusal) && refusal.code).toBe('newer_data');
    expect((refusal as Error).message).toMatch(
      /^Redis \(prefix \{bt-[0-9a-f]+\}\) holds data migrated by a newer Baton \(migration 2099-01-01-from-a-newer-baton\): upgrade/,
    );
    expect((refusal as Error).message).not.toContain('\n');
    expect(await world.redis.hkeys(world.control.keys.migrations)).toEqual([
      '2099-01-01-from-a-newer-baton',
    ]);
  });

  it('runs each migration once when several processes start together', async () => {
    const legacyMemoryPrefix = `bt-${randomHex(5)}`;
    const { ids, memory } = await storeTheOldWay(legacyMemoryPrefix);
    const connections = Array.from({ length: 5 }, () => new Redis(REDIS_URL));
    try {
      const runs = await Promise.all(
        connections.map((redis) =>
          runRedisMigrations({ redis, keys: createKeys(world.prefix), legacyMemoryPrefix }),
        ),
      );
      // Every id was applied by exactly one of them; the others waited for the lock, then found
      // nothing pending.
      expect(runs.flat().sort()).toEqual([...ALL_IDS].sort());
      expect(runs.filter((ran) => ran.length > 0)).toHaveLength(1);
      expect(await world.redis.exists(world.control.keys.migrationLock)).toBe(0);
      const page = await world.control.pageProjects({ sort: 'id', order: 'asc' });
      expect(page.projects.map((project) => project.id)).toEqual(ids);
    } finally {
      for (const redis of connections) redis.disconnect();
      await memory.close();
      await deletePrefix(`${legacyMemoryPrefix}:`);
    }
  });
  it('applies each migration once, and rewrites each stream once, when two migrators race on a short lock', async () => {
    const legacyMemoryPrefix = `bt-${randomHex(5)}`;
    const { memory } = await storeTheOldWay(legacyMemoryPrefix);
    const keys = createKeys(world.prefix);
    // Three pages of session starts from before sandboxes and `interrupted`: the two event
    // migrations each rewrite the stream, long enough for the lock to be extended meanwhile.
    const stream = keys.events('old-b');
    const write = world.redis.pipeline();
    for (let n = 1; n <= 1_200; n += 1) {
      const start = { v: 1, at: n, projectId: 'old-b', sessionId: `s${n}`, type: 'session-start' };
      write.xadd(
        stream,
        `${n}-0`,
        'e',
        JSON.stringify({ ...start, kind: 'init', sessionNumber: n, model: 'sim-haiku' }),
      );
    }
    await write.exec();
    // What each migrator writes under the lock: ids recorded, streams swapped.
    const recorded: string[] = [];
    const swapped: string[] = [];
    const watched = async (real: RealCommand, ...args: unknown[]) => {
      const [lock, token, writes] = args as [string, string, string];
      const reply = (await real(lock, token, writes)) as unknown[];
      if (lock === keys.migrationLock && reply[0] === SCRIPT_STATUS.owned) {
        for (const [, hash, id] of JSON.parse(writes) as string[][]) {
          if (hash === keys.migrations) recorded.push(id!);
        }
      }
      return reply;
    };
    const connections = [new Redis(REDIS_URL), new Redis(REDIS_URL)];
    try {
      const runs = await Promise.allSettled(
        connections.map((connection) =>
          runRedisMigrations({
            redis: proxied(connection, {
              [scripts.script('fencedBatch').command]: watched,
              [scripts.script('replaceStream').command]: async (real, ...args) => {
                const reply = await real(...args);
                if (reply === SCRIPT_STATUS.owned) swapped.push(args[0] as string);
                return reply;
              },
            }),
            keys,
            legacyMemoryPrefix,
            // Short enough to run out under a stalled runner, long enough (extended every
            // third of it) that both runners losing it needs two stalls of 2 s on one machine.
            lockTtlMs: 2_000,
          }),
        ),
      );
      // One applied them; the other waited for the lock and found nothing pending, or (when its
      // lock ran out under it) stopped in one line and left the rest to the one that took over.
      const done = runs.flatMap((run) => (run.status === 'fulfilled' ? [run.value] : []));
      expect(done.length).toBeGreaterThan(0);
      for (const run of runs) {
        if (run.status === 'rejected') {
          expect(isProjectError(run.reason) && run.reason.code).toBe('conflict');
          expect((run.reason as Error).message).toMatch(/^lost the Redis migration lock /);
        }
      }
      expect(recorded.sort()).toEqual([...ALL_IDS].sort());
      expect(done.flat().every((id) => recorded.includes(id))).toBe(true);
      expect(swapped).toEqual([stream, stream]);
      expect(await readMigrationState(world.redis, keys)).toEqual({ pending: [], unknown: [] });
      expect(await world.redis.exists(keys.migrationLock)).toBe(0);
      // Every entry upgraded once, ids kept.
      const after = await world.control.readEvents('old-b', { count: 2_000 });
      expect(after.map(({ id }) => id)).toEqual(
        Array.from({ length: 1_200 }, (_, n) => `${n + 1}-0`),
      );
      expect(
        after.every(
          ({ event }) =>
            event.type === 'session-start' &&
            event.interrupted === false &&
            event.sandbox?.mode === 'off',
        ),
      ).toBe(true);
    } finally {
      for (const redis of connections) redis.disconnect();
      await memory.close();
      await deletePrefix(`${legacyMemoryPrefix}:`);
    }
  });

  it('records no migration once another runner took the lock over', async () => {
    await world.control.createProject({ id: 'taken', goal: 'lock taken over' });
    const keys = world.control.keys;
    await world.redis.hdel(keys.migrations, ALL_IDS[0]!);
    // Another runner takes the lock just before this one records what it ran.
    const late = proxied(world.redis, {
      [scripts.script('fencedBatch').command]: async (real, ...args) => {
        await world.redis.set(keys.migrationLock, 'another-runner');
        return real(...args);
      },
    });
    const refusal = await runRedisMigrations({ redis: late, keys }).catch(
      (error: unknown) => error,
    );
    expect(isProjectError(refusal) && refusal.code).toBe('conflict');
    expect(await world.redis.hexists(keys.migrations, ALL_IDS[0]!)).toBe(0);
    expect(await world.redis.get(keys.migrationLock)).toBe('another-runner');
  });
});
