import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { RedisMemoryStore } from '../src/index.js';
import { cleanupTestStores, openTestStore, REDIS_URL } from './helpers.js';

afterEach(cleanupTestStores);

/** The sequence part of a `<epoch>:<sequence>` version. */
function sequenceOf(version: string | undefined): number {
  return Number(version?.split(':')[1]);
}

describe('history keeps the last K versions', () => {
  it('lists versions newest first (the current one included) and reads them back', async () => {
    const store = openTestStore({ historyDepth: 3 });
    await store.write('h.md', 'v1', { mode: 'create', session: 'one' });
    for (const content of ['v2', 'v3', 'v4']) {
      await store.edit('h.md', () => content, { command: 'str_replace' });
    }
    const versions = await store.listHistory('h.md');
    expect(versions.map((version) => version.command)).toEqual([
      'str_replace',
      'str_replace',
      'str_replace',
    ]);
    expect(versions).toHaveLength(3);
    expect(sequenceOf(versions[0]?.version)).toBeGreaterThan(sequenceOf(versions[1]?.version));
    const contents = await Promise.all(
      versions.map((version) => store.readHistory('h.md', version.version)),
    );
    expect(contents).toEqual(['v4', 'v3', 'v2']);
    expect(await store.readHistory('h.md', 'unknown:1')).toBeNull();
  });

  it('rename moves the history with the file (also inside a moved directory); delete removes it', async () => {
    const store = openTestStore({ historyDepth: 5 });
    await store.write('dir/a.md', 'first', { mode: 'create', session: 'multi\nline' });
    await store.write('dir/a.md', 'second', { mode: 'overwrite' });
    await store.rename('dir', 'moved');
    expect((await store.listHistory('moved/a.md')).map((version) => version.bytes)).toEqual([6, 5]);
    expect((await store.listHistory('moved/a.md'))[1]?.session).toBe('multi line');
    expect(await store.listHistory('dir/a.md')).toEqual([]);
    await store.rename('moved/a.md', 'b.md');
    expect(
      await store.readHistory('b.md', (await store.listHistory('b.md'))[1]?.version ?? ''),
    ).toBe('first');
    await store.delete('b.md');
    expect(await store.listHistory('b.md')).toEqual([]);
    await store.write('b.md', 'new life', { mode: 'create' });
    expect((await store.listHistory('b.md')).map((version) => version.bytes)).toEqual([8]);
  });

  it('keeps older versions within historyMaxBytes, dropping the oldest first', async () => {
    const store = openTestStore({ historyDepth: 10, historyMaxBytes: 250 });
    const other = openTestStore({
      namespace: store.namespace,
      historyDepth: 10,
      historyMaxBytes: 250,
    });
    // Overwrites by a store that never saw the old version keep full copies (100 bytes each).
    await store.write('r.md', 'a'.repeat(100), { mode: 'create' });
    for (const letter of ['b', 'c', 'd', 'e']) {
      await other.write('r.md', letter.repeat(100), { mode: 'overwrite' });
    }
    const versions = await store.listHistory('r.md');
    // The current version and the two newest older ones fit: 200 of 250 bytes.
    expect(versions).toHaveLength(3);
    const contents = await Promise.all(
      versions.map((version) => store.readHistory('r.md', version.version)),
    );
    expect(contents).toEqual(['e', 'd', 'c'].map((letter) => letter.repeat(100)));
    // Edits cost deltas, so many more of them fit in the same budget.
    for (let round = 0; round < 8; round += 1) {
      await store.edit('r.md', (current) => `${current}${round}`);
    }
    expect(await store.listHistory('r.md')).toHaveLength(10);
    const oldest = (await store.listHistory('r.md')).at(-1)?.version ?? '';
    // Nine older versions: seven edits (deltas), 'e' (a delta) and 'd' (a copy); 'c' fell off.
    expect(await store.readHistory('r.md', oldest)).toBe('d'.repeat(100));
  });

  it('historyDepth 0 keeps nothing', async () => {
    const store = openTestStore({ historyDepth: 0 });
    await store.write('x.md', 'x', { mode: 'create' });
    expect(await store.listHistory('x.md')).toEqual([]);
  });
});

describe('change feed', () => {
  it('records every mutation with command, path, bytes and session, and pages with after', async () => {
    const store = openTestStore();
    await store.write('a.md', 'abc', { mode: 'create', command: 'create', session: 'S1' });
    await store.edit('a.md', (current) => `${current}d`, { command: 'str_replace', session: 'S1' });
    await store.rename('a.md', 'b.md', { session: 'S2' });
    await store.delete('b.md', { session: 'S2' });
    await expect(store.write('b.md/c', 'x', { mode: 'create' })).resolves.toBeUndefined();
    await expect(store.write('b.md/c', 'again', { mode: 'create' })).rejects.toMatchObject({
      code: 'exists',
    });
    const changes = await store.readChanges();
    expect(
      changes.map(({ command, path, newPath, bytes, session }) => ({
        command,
        path,
        newPath,
        bytes,
        session,
      })),
    ).toEqual([
      { command: 'create', path: 'a.md', newPath: undefined, bytes: 3, session: 'S1' },
      { command: 'str_replace', path: 'a.md', newPath: undefined, bytes: 4, session: 'S1' },
      { command: 'rename', path: 'a.md', newPath: 'b.md', bytes: 4, session: 'S2' },
      { command: 'delete', path: 'b.md', newPath: undefined, bytes: 0, session: 'S2' },
      { command: 'create', path: 'b.md/c', newPath: undefined, bytes: 1, session: undefined },
    ]);
    for (const change of changes) {
      expect(change.at).toBeGreaterThan(1_700_000_000_000);
    }
    const afterSecond = await store.readChanges({ after: changes[1]?.id ?? '', count: 2 });
    expect(afterSecond.map((change) => change.command)).toEqual(['rename', 'delete']);
  });

  it('is capped', async () => {
    const store = openTestStore({ feedMaxLength: 10 });
    for (let index = 0; index < 300; index += 1) {
      await store.write('c.md', `${index}`, { mode: 'overwrite' });
    }
    // MAXLEN ~ trims whole stream nodes (100 entries each by default), so the cap is approximate.
    expect((await store.readChanges({ count: 1000 })).length).toBeLessThanOrEqual(110);
  });
});

/** Waits until the Redis server clock has moved past `ms` (condition wait, not a fixed sleep). */
async function serverTimeAfter(ms: number): Promise<void> {
  const client = new Redis(REDIS_URL);
  try {
    for (;;) {
      const [seconds, micros] = await client.time();
      if (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) > ms) {
        return;
      }
    }
  } finally {
    client.disconnect();
  }
}

async function modifiedAt(store: RedisMemoryStore, path: string): Promise<number> {
  return (await store.stat(path))?.modifiedAt ?? Number.NaN;
}

describe('expiry sweep', () => {
  it('removes files not read or written for the idle time and keeps the rest', async () => {
    // Granularity 0: the read right after the write must move the access time.
    const store = openTestStore({ accessTimeGranularityMs: 0 });
    await store.write('old/stale.md', 'stale', { mode: 'create' });
    await store.write('old/read-later.md', 'kept', { mode: 'create' });
    const oldTime = await modifiedAt(store, 'old/read-later.md');
    await serverTimeAfter(oldTime);
    await store.write('fresh.md', 'fresh', { mode: 'create' });
    expect(await store.read('old/read-later.md')).toBe('kept');
    const { removed } = await store.sweepExpired({ accessedBefore: oldTime + 1 });
    expect(removed).toEqual(['old/stale.md']);
    expect(await store.read('old/stale.md')).toBeNull();
    expect(await store.read('old/read-later.md')).toBe('kept');
    expect(await store.stat('old')).toMatchObject({ kind: 'directory' });
    expect(await store.usage()).toEqual({ files: 2, bytes: 9 });
    expect((await store.readChanges()).at(-1)).toMatchObject({
      command: 'expire',
      path: 'old/stale.md',
      bytes: 0,
    });
  });

  it('sweeps in batches and follows renames', async () => {
    const store = openTestStore();
    for (let index = 0; index < 25; index += 1) {
      await store.write(`many/f${index}.md`, 'x', { mode: 'create' });
    }
    await store.rename('many', 'renamed');
    const last = await modifiedAt(store, 'renamed/f24.md');
    await serverTimeAfter(last + 1);
    const { removed } = await store.sweepExpired({ olderThanMs: 0, batchSize: 7 });
    expect(removed).toHaveLength(25);
    expect(removed.every((path) => path.startsWith('renamed/'))).toBe(true);
    expect(await store.usage()).toEqual({ files: 0, bytes: 0 });
  });

  it('runs alongside concurrent writes and leaves usage and the directory index consistent', async () => {
    const store = openTestStore();
    const writer = openTestStore({ namespace: store.namespace });
    for (let index = 0; index < 50; index += 1) {
      await store.write(`stale/${index}.md`, 'x', { mode: 'create' });
    }
    await serverTimeAfter(await modifiedAt(store, 'stale/49.md'));
    const writes = Array.from({ length: 50 }, (_, index) =>
      writer.write(`live/${index}.md`, 'y', { mode: 'create' }),
    );
    const sweep = store.sweepExpired({ olderThanMs: 60_000 * 60 }); // nothing that old: only a no-op race
    const idle = store.sweepExpired({ olderThanMs: 0, batchSize: 5 });
    await Promise.all([...writes, sweep, idle]);
    const usage = await store.usage();
    const files = (await store.list('', { depth: 5 })).filter((entry) => entry.kind === 'file');
    expect(usage.files).toBe(files.length);
    expect(usage.bytes).toBe(files.reduce((sum, entry) => sum + entry.size, 0));
    expect(files.every((entry) => !entry.path.startsWith('stale/'))).toBe(true);
  });
});
