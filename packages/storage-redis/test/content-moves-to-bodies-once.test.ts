/**
 * Files written before bodies had keys of their own keep their content in the file hash's `c`
 * field (and no `b:` key). The stores read only bodies; `moveContentToBodies`, a data migration
 * run once at worker start, moves every such file's content into its body.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import {
  createRedisMemoryStore,
  moveContentToBodies,
  type RedisMemoryStore,
} from '../src/index.js';
import { REDIS_URL } from './helpers.js';

const opened: RedisMemoryStore[] = [];
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });

afterEach(async () => {
  for (const store of opened.splice(0)) {
    await store.clear();
    await store.close();
  }
});

afterAll(() => {
  redis.disconnect();
});

/** A store under a prefix of this test alone, so the migration sees no one else's files. */
function openStore(prefix: string, namespace = `n-${randomUUID()}`): RedisMemoryStore {
  const store = createRedisMemoryStore({ url: REDIS_URL, prefix, namespace, historyDepth: 4 });
  opened.push(store);
  return store;
}

function randomPrefix(): string {
  return `bt-${randomUUID().slice(0, 8)}`;
}

/** Writes `path` with today's layout, then turns it into the earlier one, as raw Redis holds it. */
async function writeTheOldWay(
  store: RedisMemoryStore,
  path: string,
  content: string,
): Promise<void> {
  await store.write(path, content, { mode: 'create' });
  const body = await redis.get(store.keys.body(path));
  const version = body?.slice(0, 40).trimEnd() ?? '';
  await redis
    .multi()
    .del(store.keys.body(path))
    .hset(store.keys.file(path), 'c', content, 'v', version)
    .exec();
}

/** A store on the same namespace that has never read or written anything (no fast paths). */
function fresh(store: RedisMemoryStore): RedisMemoryStore {
  return openStore(store.keys.base.slice(0, store.keys.base.indexOf(':{')), store.namespace);
}

describe('files from before bodies move to bodies once', () => {
  it('moves every such file of every namespace under the prefix, and stores read them after', async () => {
    const prefix = randomPrefix();
    const first = openStore(prefix);
    const second = openStore(prefix);
    await writeTheOldWay(first, 'notes/a.md', 'old layout ✓');
    await writeTheOldWay(first, 'dir/sub/two.md', 'two');
    await writeTheOldWay(second, 'e.md', 'first');
    await second.write('current.md', 'written with a body', { mode: 'create' });
    // The read path has no fallback any more: before the migration the file is not there.
    expect(await fresh(first).read('notes/a.md')).toBeNull();

    expect(await moveContentToBodies({ redis, prefix, scanCount: 2 })).toBe(3);

    expect(await fresh(first).read('notes/a.md')).toBe('old layout ✓');
    expect(await fresh(first).read('dir/sub/two.md')).toBe('two');
    expect(await fresh(second).read('current.md')).toBe('written with a body');
    for (const [store, path] of [
      [first, 'notes/a.md'],
      [first, 'dir/sub/two.md'],
      [second, 'e.md'],
    ] as const) {
      expect(await redis.hexists(store.keys.file(path), 'c')).toBe(0);
      expect(await redis.exists(store.keys.body(path))).toBe(1);
    }
    // Edit, overwrite and history work on a moved file, and its old version is kept.
    await fresh(second).edit('e.md', (current) => `${current} second`);
    await fresh(second).write('e.md', 'third', { mode: 'overwrite' });
    const versions = await second.listHistory('e.md');
    expect(
      await Promise.all(versions.map((entry) => second.readHistory('e.md', entry.version))),
    ).toEqual(['third', 'first second', 'first']);
    // Rename carries the moved body along.
    await fresh(first).rename('dir', 'moved');
    expect(await fresh(first).read('moved/sub/two.md')).toBe('two');
    // Run again: nothing left to move.
    expect(await moveContentToBodies({ redis, prefix })).toBe(0);
  });

  it('keeps a body that is already there (it is newer) and drops the stale copy in the hash', async () => {
    const prefix = randomPrefix();
    const store = openStore(prefix);
    await store.write('b.md', 'newer', { mode: 'create' });
    await redis.hset(store.keys.file('b.md'), 'c', 'stale', 'v', 'old');
    expect(await moveContentToBodies({ redis, prefix })).toBe(1);
    expect(await fresh(store).read('b.md')).toBe('newer');
    expect(await redis.hexists(store.keys.file('b.md'), 'c')).toBe(0);
  });

  it('leaves files under other prefixes alone', async () => {
    const mine = openStore(randomPrefix());
    const other = openStore(randomPrefix());
    await writeTheOldWay(other, 'x.md', 'not mine');
    expect(await moveContentToBodies({ redis, prefix: mine.keys.base.split(':')[0] })).toBe(0);
    expect(await redis.hget(other.keys.file('x.md'), 'c')).toBe('not mine');
  });
});
