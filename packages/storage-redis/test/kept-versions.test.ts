/**
 * Older versions that are not kept as deltas live in keys of their own (`<base>x:<version>`),
 * moved there by RENAME so their bytes never pass through a script. These tests check that every
 * such key is found again by history reads and is removed by whatever drops its version: trimming
 * by depth or bytes, overwrite with history off, delete, expiry, and `clear()`. No key may leak.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisMemoryStore } from '../src/index.js';
import { cleanupTestStores, openTestStore } from './helpers.js';

afterAll(async () => {
  await cleanupTestStores();
});

/** Every key of the store's namespace whose name starts with `<base><kind>`. */
async function keysOf(store: RedisMemoryStore, kind = ''): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await store.redis.scan(cursor, 'MATCH', `${store.keys.base}${kind}*`);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

/** Content of every listed version, newest first. */
async function allVersions(store: RedisMemoryStore, path: string): Promise<Array<string | null>> {
  const versions = await store.listHistory(path);
  return Promise.all(versions.map((entry) => store.readHistory(path, entry.version)));
}

/** Two stores on one namespace: what one writes, the other did not see (no delta possible). */
function twoWriters(options: { historyDepth?: number; historyMaxBytes?: number } = {}) {
  const first = openTestStore(options);
  const second = openTestStore({ ...options, namespace: first.namespace });
  return [first, second] as const;
}

describe('versions kept whole in keys of their own', () => {
  it('overwrites by writers that did not see the old version keep depth - 1 kept keys, each readable', async () => {
    const [one, two] = twoWriters({ historyDepth: 3 });
    const contents = ['v1', 'v2', 'v3', 'v4', 'v5'].map((tag) => `${tag} `.repeat(2000));
    for (const [index, content] of contents.entries()) {
      await (index % 2 === 0 ? one : two).write('a.md', content, { mode: 'overwrite' });
    }
    expect(await allVersions(one, 'a.md')).toEqual([contents[4], contents[3], contents[2]]);
    const versions = await one.listHistory('a.md');
    expect(await keysOf(one, 'x:')).toEqual(
      versions
        .slice(1)
        .map((entry) => one.keys.kept(entry.version))
        .sort(),
    );
  });

  it('a rewrite from the same store (a delta too large to send) is kept whole as well', async () => {
    const store = openTestStore({ historyDepth: 4 });
    const first = 'a'.repeat(10_000);
    const second = 'b'.repeat(10_000);
    await store.write('r.md', first, { mode: 'create' });
    await store.write('r.md', second, { mode: 'overwrite' });
    await store.edit('r.md', (current) => `${current}!`);
    expect(await allVersions(store, 'r.md')).toEqual([`${second}!`, second, first]);
    // The edit's delta is inline; the rewrite's old version has a key of its own.
    expect(await keysOf(store, 'x:')).toHaveLength(1);
  });

  it('the byte budget drops the oldest kept keys, and a version larger than the budget keeps none', async () => {
    const [one, two] = twoWriters({ historyDepth: 10, historyMaxBytes: 2_500 });
    for (const tag of ['1', '2', '3', '4']) {
      await (tag === '2' || tag === '4' ? two : one).write('b.md', tag.repeat(1_000), {
        mode: 'overwrite',
      });
    }
    // Older versions of 1,000 bytes each: two fit in 2,500 bytes.
    expect(await allVersions(one, 'b.md')).toEqual(['4', '3', '2'].map((tag) => tag.repeat(1_000)));
    expect(await keysOf(one, 'x:')).toHaveLength(2);
    await one.write('b.md', 'z'.repeat(3_000), { mode: 'overwrite' });
    await two.write('b.md', 'small', { mode: 'overwrite' });
    // The 3,000-byte version is larger than the whole budget: nothing older can be kept.
    expect(await allVersions(one, 'b.md')).toEqual(['small']);
    expect(await keysOf(one, 'x:')).toEqual([]);
    expect(await keysOf(one, 'h:')).toEqual([]);
  });

  it('an overwrite by a store with history off removes the kept keys', async () => {
    const [one, two] = twoWriters({ historyDepth: 5 });
    await one.write('c.md', 'first', { mode: 'create' });
    await two.write('c.md', 'second', { mode: 'overwrite' });
    expect(await keysOf(one, 'x:')).toHaveLength(1);
    const off = openTestStore({ namespace: one.namespace, historyDepth: 0 });
    await off.write('c.md', 'third', { mode: 'overwrite' });
    expect(await keysOf(one, 'x:')).toEqual([]);
    expect(await allVersions(one, 'c.md')).toEqual(['third']);
  });

  it('rename keeps the history readable; delete and expiry remove every kept key', async () => {
    const [one, two] = twoWriters({ historyDepth: 5 });
    for (const path of ['d/one.md', 'd/sub/two.md', 'e.md']) {
      await one.write(path, `${path} first`, { mode: 'create' });
      await two.write(path, `${path} second`, { mode: 'overwrite' });
    }
    expect(await keysOf(one, 'x:')).toHaveLength(3);
    await one.rename('d', 'moved');
    expect(await allVersions(two, 'moved/sub/two.md')).toEqual([
      'd/sub/two.md second',
      'd/sub/two.md first',
    ]);
    await two.delete('moved');
    expect(await keysOf(one, 'x:')).toHaveLength(1);
    const swept = await one.sweepExpired({ accessedBefore: Date.now() + 60_000 });
    expect(swept.removed).toEqual(['e.md']);
    expect(await keysOf(one, 'x:')).toEqual([]);
    expect(await keysOf(one, 'h:')).toEqual([]);
    expect(await keysOf(one, 'f:')).toEqual([]);
  });

  it('clear() leaves no key of the namespace at all', async () => {
    const [one, two] = twoWriters({ historyDepth: 5 });
    await one.write('k/a.md', 'one', { mode: 'create' });
    await two.write('k/a.md', 'two', { mode: 'overwrite' });
    await one.clear();
    expect(await keysOf(one)).toEqual([]);
  });

  it('a history list from before kept keys (full copies inline) still reads, and is trimmed by new writes', async () => {
    const store = openTestStore({ historyDepth: 3 });
    await store.write('old.md', 'current', { mode: 'create' });
    const [current] = await store.listHistory('old.md');
    // What the earlier write script left: an inline full copy ('f') and a plain size in 'hs'.
    await store.redis.lpush(
      store.keys.history('old.md'),
      `0:1\n1700000000000\n5\ncreate\n\nf\nolder`,
    );
    await store.redis.hset(store.keys.file('old.md'), 'hs', '5');
    expect(await allVersions(store, 'old.md')).toEqual(['current', 'older']);
    const other = openTestStore({ namespace: store.namespace, historyDepth: 3 });
    await other.write('old.md', 'newest', { mode: 'overwrite' });
    await other.write('old.md', 'newest again', { mode: 'overwrite' });
    expect(await allVersions(store, 'old.md')).toEqual(['newest again', 'newest', 'current']);
    expect(current?.bytes).toBe(7);
    // 'current' (which `other` never saw) is kept whole; 'newest' as the delta `other` made.
    expect(await keysOf(store, 'x:')).toHaveLength(1);
  });
});
