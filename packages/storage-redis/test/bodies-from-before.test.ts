/**
 * Files written before bodies had keys of their own keep their content in the file hash's `c`
 * field (and no `b:` key). Every operation must still see them, and the first script that touches
 * one moves its content to a body, once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisMemoryStore } from '../src/index.js';
import { cleanupTestStores, openTestStore } from './helpers.js';

afterAll(async () => {
  await cleanupTestStores();
});

/** Writes `path` with today's layout, then turns it into the earlier one. */
async function writeTheOldWay(
  store: RedisMemoryStore,
  path: string,
  content: string,
): Promise<void> {
  await store.write(path, content, { mode: 'create' });
  const body = await store.redis.get(store.keys.body(path));
  const version = body?.slice(0, 40).trimEnd() ?? '';
  await store.redis
    .multi()
    .del(store.keys.body(path))
    .hset(store.keys.file(path), 'c', content, 'v', version)
    .exec();
}

/** A store on the same namespace that has never read or written anything (no fast paths). */
function fresh(store: RedisMemoryStore): RedisMemoryStore {
  return openTestStore({ namespace: store.namespace });
}

describe('files from before bodies', () => {
  it('read: the script moves the content to a body once, and later reads are plain GETs', async () => {
    const store = openTestStore();
    await writeTheOldWay(store, 'notes/a.md', 'old layout ✓');
    expect(await store.redis.exists(store.keys.body('notes/a.md'))).toBe(0);
    // The writer recorded the access: its fast path misses (no body) and falls back to the script.
    expect(await store.read('notes/a.md')).toBe('old layout ✓');
    expect(await fresh(store).read('notes/a.md')).toBe('old layout ✓');
    expect(await store.redis.exists(store.keys.body('notes/a.md'))).toBe(1);
    expect(await store.redis.hexists(store.keys.file('notes/a.md'), 'c')).toBe(0);
  });

  it('edit, overwrite and history work on one, and the old version is kept', async () => {
    const store = openTestStore({ historyDepth: 4 });
    await writeTheOldWay(store, 'e.md', 'first');
    const other = fresh(store);
    await other.edit('e.md', (current) => `${current} second`);
    await fresh(store).write('e.md', 'third', { mode: 'overwrite' });
    const versions = await store.listHistory('e.md');
    expect(
      await Promise.all(versions.map((entry) => store.readHistory('e.md', entry.version))),
    ).toEqual(['third', 'first second', 'first']);
  });

  it('a compare-and-set conflict on one reports the current content', async () => {
    const store = openTestStore();
    await store.write('c.md', 'zero', { mode: 'create' });
    const editor = fresh(store);
    await editor.read('c.md'); // caches the version 'zero'
    await writeTheOldWay(store, 'd.md', 'unused');
    // Another store rewrites c.md the old way behind the editor's back.
    await store.delete('c.md');
    await writeTheOldWay(store, 'c.md', 'rewritten');
    const seen: string[] = [];
    await editor.edit('c.md', (current) => {
      seen.push(current);
      return `${current}!`;
    });
    expect(seen).toEqual(['zero', 'rewritten']);
    expect(await fresh(store).read('c.md')).toBe('rewritten!');
  });

  it('history of one not yet moved lists its current version', async () => {
    const store = openTestStore();
    await writeTheOldWay(store, 'h.md', 'current');
    const versions = await fresh(store).listHistory('h.md');
    expect(versions.map((entry) => entry.bytes)).toEqual([7]);
    expect(await fresh(store).readHistory('h.md', versions[0]?.version ?? '')).toBe('current');
  });

  it('rename moves one (alone or in a directory), and delete removes every key of it', async () => {
    const store = openTestStore();
    await writeTheOldWay(store, 'dir/one.md', 'one');
    await writeTheOldWay(store, 'dir/sub/two.md', 'two');
    await writeTheOldWay(store, 'alone.md', 'alone');
    await fresh(store).rename('dir', 'moved');
    await fresh(store).rename('alone.md', 'moved/alone.md');
    const reader = fresh(store);
    expect(await reader.read('moved/one.md')).toBe('one');
    expect(await reader.read('moved/sub/two.md')).toBe('two');
    expect(await reader.read('moved/alone.md')).toBe('alone');
    await writeTheOldWay(store, 'moved/late.md', 'late');
    await fresh(store).delete('moved');
    const [, left] = await store.redis.scan(
      '0',
      'MATCH',
      `${store.keys.base}[bfhx]:*`,
      'COUNT',
      1000,
    );
    expect(left).toEqual([]);
    expect(await store.usage()).toEqual({ bytes: 0, files: 0 });
  });
});
