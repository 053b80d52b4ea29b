import { appendFileSync, lstatSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFileSystemStore, type FileSystemStore, type ListedEntry } from '@baton/core';
import { RACY_MS } from '../src/stores/internal/directory-snapshots.js';
import { race, spawnWorker, stopWorkers, type ChildWorker } from './file-system-helpers.js';

/**
 * The listing cache of FileSystemStore (src/stores/internal/directory-snapshots.ts) must never
 * change what `list` returns: every listing of a caching store is compared with the listing of a
 * store on the same root with the cache off.
 */

/** Small deterministic PRNG (mulberry32), so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const DIRECTORIES = ['', 'a', 'a/b', 'c', '.hidden'];
const NAMES = ['x.md', 'y.md', 'z.md', 'b', 'long-name.md'];

async function listOrError(store: FileSystemStore, path: string): Promise<ListedEntry[] | string> {
  try {
    return await store.list(path, { depth: 2, skipHidden: path !== '.hidden' });
  } catch (error) {
    return (error as { code?: string }).code ?? 'error';
  }
}

describe('FileSystemStore listing cache', () => {
  let directory: string;
  let root: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'baton-fs-listing-'));
    root = join(directory, 'memories');
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('lists exactly what an uncached store lists after every kind of mutation, by this and another instance', async () => {
    const cached = await createFileSystemStore({ root });
    const other = await createFileSystemStore({ root });
    const truth = await createFileSystemStore({ root, listingCacheEntries: 0 });
    const next = random(20261129);
    const pick = <T>(values: T[]): T => values[Math.floor(next() * values.length)]!;
    const path = (): string => {
      const parent = pick(DIRECTORIES);
      return parent === '' ? pick(NAMES) : `${parent}/${pick(NAMES)}`;
    };
    let mutations = 0;
    for (let step = 0; step < 400; step++) {
      // Mostly this instance (patched listings), sometimes another one (generation changes).
      const actor = next() < 0.8 ? cached : other;
      const kind = Math.floor(next() * 6);
      const target = path();
      try {
        if (kind === 0) await actor.write(target, 'x'.repeat(step % 50), { mode: 'create' });
        else if (kind === 1) await actor.write(target, `v${step}`, { mode: 'overwrite' });
        else if (kind === 2) await actor.edit(target, (current) => `${current}+${step}`);
        else if (kind === 3) await actor.delete(next() < 0.8 ? target : pick(DIRECTORIES.slice(1)));
        else if (kind === 4) await actor.rename(target, path());
        else await actor.rename(pick(DIRECTORIES.slice(1)), pick(DIRECTORIES.slice(1)));
        mutations += 1;
      } catch (error) {
        // Refused mutations (not_found, exists, ...) are part of the sequence too.
        expect(error).toHaveProperty('code');
      }
      for (const listed of DIRECTORIES) {
        expect(await listOrError(cached, listed), `step ${step}, list '${listed}'`).toEqual(
          await listOrError(truth, listed),
        );
      }
    }
    // The sequence really mutated the tree (it is not a run of refusals).
    expect(mutations).toBeGreaterThan(150);
    await Promise.all([cached.close(), other.close(), truth.close()]);
  });

  it('shows a file size changed by an edit and a file created right after the listing', async () => {
    const store = await createFileSystemStore({ root });
    await store.write('notes/a.md', 'one', { mode: 'create' });
    expect(await store.list('notes', { depth: 2 })).toMatchObject([
      { path: 'notes/a.md', size: 3 },
    ]);
    await store.edit('notes/a.md', (current) => `${current} two`);
    await store.write('notes/b.md', 'bb', { mode: 'create' });
    expect(await store.list('notes', { depth: 2 })).toMatchObject([
      { path: 'notes/a.md', size: 7 },
      { path: 'notes/b.md', size: 2 },
    ]);
    await store.delete('notes/a.md');
    expect(await store.list('notes', { depth: 2 })).toMatchObject([{ path: 'notes/b.md' }]);
    await store.close();
  });

  it('sees a change made by another program once the directory time moves on', async () => {
    const store = await createFileSystemStore({ root });
    await store.write('notes/a.md', 'one', { mode: 'create' });
    const host = join(root, 'notes');
    // Wait (on the clock, not for an event) until the directory is old enough for its listing
    // to be trusted without the generation token; then changes are seen through its mtime alone.
    const stats = lstatSync(host);
    const oldEnough = Math.max(stats.mtimeMs, stats.ctimeMs) + RACY_MS + 10;
    while (Date.now() < oldEnough) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await store.list('notes', { depth: 1 })).map((entry) => entry.path)).toEqual([
      'notes/a.md',
    ]);
    writeFileSync(join(host, 'b.md'), 'outside');
    expect((await store.list('notes', { depth: 1 })).map((entry) => entry.path)).toEqual([
      'notes/a.md',
      'notes/b.md',
    ]);
    unlinkSync(join(host, 'a.md'));
    expect((await store.list('notes', { depth: 1 })).map((entry) => entry.path)).toEqual([
      'notes/b.md',
    ]);
    await store.close();
  }, 15_000);

  it('shows an in-place append by another program (directory unchanged) within listingCacheMaxAgeMs', async () => {
    const maxAgeMs = 300;
    const store = await createFileSystemStore({ root, listingCacheMaxAgeMs: maxAgeMs });
    await store.write('a.md', 'one', { mode: 'create' });
    await store.list('', { depth: 1 });
    // Taken after the listing returned, so not before the snapshot's own time (its read started
    // after the call; on a loaded machine well after).
    const listedAt = Date.now();
    appendFileSync(join(root, 'a.md'), ' two');
    // A store mutation in the directory patches only its own entry...
    await store.write('b.md', 'b', { mode: 'create' });
    // ...and the listing is read again from the disk once it is older than the maximum age.
    while (Date.now() <= listedAt + maxAgeMs) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await store.list('', { depth: 1 })).toMatchObject([
      { path: 'a.md', size: 7 },
      { path: 'b.md', size: 1 },
    ]);
    await store.close();
  });

  it('refuses listingCacheEntries and listingCacheMaxAgeMs that are not a non-negative integer', async () => {
    for (const value of [-1, 1.5, Number.NaN]) {
      await expect(createFileSystemStore({ root, listingCacheEntries: value })).rejects.toThrow(
        /listingCacheEntries must be a non-negative integer/u,
      );
      await expect(createFileSystemStore({ root, listingCacheMaxAgeMs: value })).rejects.toThrow(
        /listingCacheMaxAgeMs must be a non-negative integer/u,
      );
    }
  });
});

describe('FileSystemStore listing cache across processes', () => {
  let workers: ChildWorker[] = [];
  let directory: string;

  beforeAll(async () => {
    workers = await Promise.all([spawnWorker(), spawnWorker()]);
  }, 90_000);

  afterAll(async () => {
    await stopWorkers(workers);
  });

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'baton-fs-listing-'));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("shows other processes' creates and edits in the next listing", async () => {
    const root = join(directory, 'memories');
    const store = await createFileSystemStore({ root });
    await store.write('log.md', 'start\n', { mode: 'create' });
    const before = await store.list('', { depth: 2 });
    expect(before.map((entry) => entry.path)).toEqual(['log.md']);
    await race(workers, [
      { root, action: 'append', path: 'log.md', label: 'p1', count: 3 },
      { root, action: 'create-many', label: 'p2', count: 4 },
    ]);
    const truth = await createFileSystemStore({ root, listingCacheEntries: 0 });
    const after = await store.list('', { depth: 2 });
    expect(after).toEqual(await truth.list('', { depth: 2 }));
    expect(after.map((entry) => entry.path)).toEqual([
      'log.md',
      'p2-0.md',
      'p2-1.md',
      'p2-2.md',
      'p2-3.md',
    ]);
    expect(after[0]?.size).toBe(Buffer.byteLength(`start\n${'p1-0\np1-1\np1-2\n'}`));
    await Promise.all([store.close(), truth.close()]);
  });
});
