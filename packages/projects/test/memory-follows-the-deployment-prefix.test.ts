/**
 * The `2026-12-04-memory-prefix` migration: a deployment with its own BATON_PREFIX takes its
 * projects' memory from where every earlier version kept it (`baton:{<id>}`, here a test's own
 * legacy prefix) to its own memory prefix, once; a namespace the default deployment or another
 * deployment holds is never taken twice, and what is not moved is reported in one line.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { deletePrefix, randomHex, REDIS_URL } from '@baton/test-support';
import { createNamespaceKeys, createRedisMemoryStore } from '@baton/storage-redis';
import {
  createBatonControl,
  memoryPrefixOf,
  runRedisMigrations,
  type BatonControl,
  type MigrationNotice,
} from '../src/index.js';

describe('memory keys follow BATON_PREFIX', () => {
  const opened: { controls: BatonControl[]; prefixes: string[]; redis: Redis[] } = {
    controls: [],
    prefixes: [],
    redis: [],
  };
  afterEach(async () => {
    for (const control of opened.controls.splice(0)) await control.close();
    for (const redis of opened.redis.splice(0)) redis.disconnect();
    for (const prefix of opened.prefixes.splice(0)) await deletePrefix(prefix);
  });

  /** A deployment on its own prefix holding `ids`, with its migrations not run yet. */
  async function deployment(tag: string, ids: string[]): Promise<BatonControl> {
    const control = createBatonControl({ url: REDIS_URL, prefix: `{${tag}}` });
    opened.controls.push(control);
    opened.prefixes.push(`{${tag}}`, `${tag}:`);
    for (const id of ids) await control.createProject({ id, goal: `goal of ${id}` });
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    opened.redis.push(redis);
    // Creating on a fresh prefix recorded every migration as applied: this one stored before.
    await redis.del(control.keys.migrations);
    return control;
  }

  function store(prefix: string, namespace: string, fence?: number) {
    return createRedisMemoryStore({
      url: REDIS_URL,
      prefix,
      namespace,
      fence: fence === undefined ? undefined : { token: fence },
    });
  }

  async function write(prefix: string, namespace: string, text: string, fence?: number) {
    const memory = store(prefix, namespace, fence);
    try {
      await memory.claimFence();
      await memory.write('progress.md', text, { mode: 'create' });
    } finally {
      await memory.close();
    }
  }

  async function read(prefix: string, namespace: string): Promise<string | null> {
    const memory = store(prefix, namespace);
    try {
      return await memory.read('progress.md');
    } finally {
      await memory.close();
    }
  }

  async function migrate(control: BatonControl, legacyMemoryPrefix: string) {
    const notices: MigrationNotice[] = [];
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    opened.redis.push(redis);
    const ran = await runRedisMigrations({
      redis,
      keys: control.keys,
      legacyMemoryPrefix,
      report: (notice) => notices.push(notice),
    });
    return { ran, notices };
  }

  it('moves a deployment its own projects memory once; the default deployment keeps its keys', async () => {
    const id = randomHex(4);
    // The legacy prefix stands for `baton`; the deployment `{<legacy>}` for the default `{baton}`.
    const legacy = `bm-${id}`;
    opened.prefixes.push(`${legacy}:`);
    const fallback = await deployment(legacy, ['kept']);
    const a = await deployment(`bm-a-${id}`, ['shared', 'mine', 'kept', 'clash', 'empty']);
    const b = await deployment(`bm-b-${id}`, ['shared', 'theirs']);
    expect(fallback.keys.memoryPrefix).toBe(legacy);
    expect(a.keys.memoryPrefix).toBe(`bm-a-${id}`);

    // Every deployment's memory where earlier versions kept it; `shared` fenced by b's sessions
    // (token 99 of b's counter, which a's leases never reach).
    await write(legacy, 'shared', 'shared by a and b', 99);
    await write(legacy, 'mine', 'only a');
    await write(legacy, 'kept', 'the default deployment and a');
    await write(legacy, 'theirs', 'only b');
    await write(legacy, 'clash', 'old clash');
    await write(legacy, 'nobodys', 'no deployment here holds it');
    // A key the move would overwrite: never clobbered.
    await write(a.keys.memoryPrefix, 'clash', 'new clash');

    const first = await migrate(a, legacy);
    expect(first.ran).toContain('2026-12-04-memory-prefix');
    const mine = a.keys.memoryPrefix;
    expect(await read(mine, 'shared')).toBe('shared by a and b');
    expect(await read(mine, 'mine')).toBe('only a');
    expect(await read(legacy, 'shared')).toBeNull();
    expect(await read(legacy, 'mine')).toBeNull();
    // The default deployment's project of the same id keeps its memory; so does one of nobody here.
    expect(await read(legacy, 'kept')).toBe('the default deployment and a');
    expect(await read(mine, 'kept')).toBeNull();
    expect(await read(legacy, 'nobodys')).toBe('no deployment here holds it');
    expect(await read(mine, 'clash')).toBe('new clash');
    // b's fence went with the move: a's first lease (token 1) may write.
    const fenced = store(mine, 'shared', 1);
    await fenced.claimFence();
    await fenced.write('progress.md', 'a continues', { mode: 'overwrite' });
    await fenced.close();
    expect(first.notices).toHaveLength(1);
    expect(first.notices[0]).toMatchObject({
      migration: '2026-12-04-memory-prefix',
      projects: ['kept', 'clash'],
    });
    expect(first.notices[0]?.message).toMatch(
      new RegExp(
        `^memory of 2 project\\(s\\) of BATON_PREFIX \\{bm-a-${id}\\} was not moved to bm-a-${id}:\\{<id>\\}: kept: the deployment with BATON_PREFIX \\{${legacy}\\} holds a project of the same id .*; clash \\(\\d+ keys\\): a key of the same name under bm-a-${id}:\\{<id>\\} exists already`,
      ),
    );
    expect(first.notices[0]?.message).not.toContain('\n');

    // b migrates later: `shared` went to a, `theirs` is b's own.
    const second = await migrate(b, legacy);
    expect(second.ran).toContain('2026-12-04-memory-prefix');
    expect(await read(b.keys.memoryPrefix, 'theirs')).toBe('only b');
    expect(await read(b.keys.memoryPrefix, 'shared')).toBeNull();
    expect(await read(mine, 'shared')).toBe('a continues');
    expect(second.notices).toEqual([
      {
        migration: '2026-12-04-memory-prefix',
        projects: ['shared'],
        message: expect.stringContaining(
          `shared (to bm-a-${id}:{shared}): another deployment on this Redis with a project of the same id migrated first`,
        ) as string,
      },
    ]);

    // Once: nothing runs again. The default deployment moves nothing.
    expect((await migrate(a, legacy)).ran).toEqual([]);
    const defaults = await migrate(fallback, legacy);
    expect(defaults.notices).toEqual([]);
    expect(await read(legacy, 'kept')).toBe('the default deployment and a');
  });

  it('leaves the fence of a namespace another runner moved: only what this run moved loses its fence', async () => {
    const id = randomHex(4);
    const legacy = `bm-${id}`;
    opened.prefixes.push(`${legacy}:`);
    const a = await deployment(`bm-f-${id}`, ['late']);
    const mine = a.keys.memoryPrefix;
    // Another runner of this deployment moved `late` and finished (only its marker is left under
    // the legacy prefix); a session since fenced the namespace with token 5.
    const marker = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    opened.redis.push(marker);
    await marker.set(`${createNamespaceKeys('late', legacy).base}moved-to`, mine);
    await write(mine, 'late', 'moved by the other runner', 5);

    await migrate(a, legacy);
    // A cut-off writer holding an older token is still refused.
    const stale = store(mine, 'late', 1);
    try {
      await expect(stale.claimFence()).rejects.toThrow();
    } finally {
      await stale.close();
    }
    expect(await read(mine, 'late')).toBe('moved by the other runner');
  });

  it('maps {baton} to the memory prefix every earlier version used, and no two prefixes to one', () => {
    expect(memoryPrefixOf('{baton}')).toBe('baton');
    expect(memoryPrefixOf('{baton-staging}')).toBe('baton-staging');
    const others = ['{ab}', 'a{b}', '{a}b', 'x{a}b', 'x{ab}'].map(memoryPrefixOf);
    expect(new Set(others).size).toBe(others.length);
    for (const prefix of others) expect(prefix).not.toMatch(/[{}\s]/);
  });

  it('refuses a prefix without a hash tag in the one message, naming the option', () => {
    expect(() => createBatonControl({ url: REDIS_URL, prefix: 'baton' })).toThrow(
      'prefix must contain one {hash tag} and no ":", got "baton"',
    );
  });
});
