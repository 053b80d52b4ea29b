import type { Stats } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DirectorySnapshots, RACY_MS, type SnapshotEntry } from './directory-snapshots.js';

/** Only what the snapshots read of a directory's lstat. */
function directoryStats(ino: number, mtimeMs: number, ctimeMs = mtimeMs): Stats {
  return { ino, mtimeMs, ctimeMs } as Stats;
}

const file = (name: string, size: number): SnapshotEntry => ({
  name,
  kind: 'file',
  size,
  modifiedAt: 1,
});

const NOW = Date.now();
/** A directory whose last change is long before the snapshot: trusted on its identity alone. */
const OLD = directoryStats(7, NOW - 60_000);
/** A directory that changed just now: trusted only under the same generation token. */
const RECENT = directoryStats(7, NOW - 1);

const generation =
  (token: string): (() => string) =>
  () =>
    token;

describe('DirectorySnapshots', () => {
  it('trusts an old snapshot while the directory identity (inode, mtime, ctime) is unchanged', () => {
    const snapshots = new DirectorySnapshots();
    snapshots.set('d', OLD, [file('a', 1)], NOW, 'g1');
    expect(snapshots.get('d', OLD, generation('other'))).toEqual([file('a', 1)]);
    expect(
      snapshots.get('d', directoryStats(7, OLD.mtimeMs + 1), generation('g1')),
    ).toBeUndefined();
    // Dropped when found invalid: even the old identity no longer hits.
    expect(snapshots.get('d', OLD, generation('g1'))).toBeUndefined();
    snapshots.set('d', OLD, [], NOW, 'g1');
    expect(snapshots.get('d', directoryStats(8, OLD.mtimeMs), generation('g1'))).toBeUndefined();
    snapshots.set('d', OLD, [], NOW, 'g1');
    expect(
      snapshots.get('d', directoryStats(7, OLD.mtimeMs, NOW), generation('g1')),
    ).toBeUndefined();
  });

  it('trusts a racy snapshot (directory changed within RACY_MS) only under the same generation token', () => {
    const snapshots = new DirectorySnapshots();
    snapshots.set('d', RECENT, [file('a', 1)], NOW, 'g1');
    expect(snapshots.get('d', RECENT, generation('g1'))).toEqual([file('a', 1)]);
    expect(snapshots.get('d', RECENT, generation('g2'))).toBeUndefined();
    // Exactly at the boundary the snapshot is no longer racy.
    const boundary = directoryStats(7, NOW - RACY_MS);
    snapshots.set('d', boundary, [], NOW, 'g1');
    expect(snapshots.get('d', boundary, generation('g2'))).toEqual([]);
  });

  it('reads the generation token only for racy snapshots', () => {
    const snapshots = new DirectorySnapshots();
    snapshots.set('d', OLD, [], NOW, 'g1');
    let reads = 0;
    snapshots.get('d', OLD, () => {
      reads += 1;
      return 'g1';
    });
    expect(reads).toBe(0);
  });

  it('drops a snapshot older than the maximum age', () => {
    const snapshots = new DirectorySnapshots(100, 1_000);
    snapshots.set('d', OLD, [], NOW - 1_001, 'g1');
    expect(snapshots.get('d', OLD, generation('g1'))).toBeUndefined();
    snapshots.set('d', OLD, [], NOW, 'g1');
    expect(snapshots.get('d', OLD, generation('g1'))).toEqual([]);
  });

  it('patches an entry in, over and out, keeping name order, and carries it to the new token on commit', () => {
    const snapshots = new DirectorySnapshots();
    snapshots.set('d', OLD, [file('a', 1), file('c', 3)], NOW, 'g1');
    expect(snapshots.prepareChange('d', OLD, 'g1')).toBe(true);
    const changed = directoryStats(7, NOW);
    snapshots.patch('d', changed, 'b', file('b', 2));
    snapshots.patch('d', changed, 'c', file('c', 30));
    snapshots.patch('d', changed, 'a', undefined);
    snapshots.commit('g1', 'g2');
    expect(snapshots.get('d', changed, generation('g2'))).toEqual([file('b', 2), file('c', 30)]);
    // Patched means racy now: another process's mutation (new token) invalidates it.
    expect(snapshots.get('d', changed, generation('g3'))).toBeUndefined();
  });

  it('refuses to patch a snapshot that was stale before the change', () => {
    const snapshots = new DirectorySnapshots();
    snapshots.set('d', OLD, [file('a', 1)], NOW, 'g1');
    expect(snapshots.prepareChange('d', directoryStats(7, OLD.mtimeMs + 5), 'g1')).toBe(false);
    expect(snapshots.has('d')).toBe(false);
    snapshots.set('d', RECENT, [file('a', 1)], NOW, 'g1');
    expect(snapshots.prepareChange('d', RECENT, 'g0')).toBe(false);
    expect(snapshots.has('d')).toBe(false);
  });

  it('commit keeps racy snapshots of the locked token, drops the others, and drops all racy ones after a failure', () => {
    const snapshots = new DirectorySnapshots();
    snapshots.set('same', RECENT, [], NOW, 'g1');
    snapshots.set('stale', RECENT, [], NOW, 'g0');
    snapshots.set('old', OLD, [], NOW, 'g0');
    snapshots.commit('g1', 'g2');
    expect(snapshots.get('same', RECENT, generation('g2'))).toEqual([]);
    expect(snapshots.has('stale')).toBe(false);
    expect(snapshots.has('old')).toBe(true);
    snapshots.commit('g2', undefined);
    expect(snapshots.has('same')).toBe(false);
    expect(snapshots.has('old')).toBe(true);
  });

  it('dropTree drops a directory and everything below it, not its siblings', () => {
    const snapshots = new DirectorySnapshots();
    for (const directory of ['a', 'a/b', 'a/b/c', 'ab', 'x'])
      snapshots.set(directory, OLD, [], NOW, 'g');
    snapshots.dropTree('a');
    expect(['a', 'a/b', 'a/b/c', 'ab', 'x'].map((directory) => snapshots.has(directory))).toEqual([
      false,
      false,
      false,
      true,
      true,
    ]);
    snapshots.dropTree('');
    expect(snapshots.has('x')).toBe(false);
  });

  it('keeps at most maxEntries entries, evicting the least recently used directory', () => {
    const snapshots = new DirectorySnapshots(4);
    snapshots.set('one', OLD, [file('a', 1), file('b', 1)], NOW, 'g');
    snapshots.set('two', OLD, [file('a', 1), file('b', 1)], NOW, 'g');
    snapshots.get('one', OLD, generation('g'));
    snapshots.set('three', OLD, [file('a', 1)], NOW, 'g');
    expect([snapshots.has('one'), snapshots.has('two'), snapshots.has('three')]).toEqual([
      true,
      false,
      true,
    ]);
    // A directory bigger than the whole cache is not kept at all.
    snapshots.set(
      'huge',
      OLD,
      Array.from({ length: 5 }, (_, index) => file(`f${index}`, 1)),
      NOW,
      'g',
    );
    expect(snapshots.has('huge')).toBe(false);
  });

  it('keeps nothing when maxEntries or maxAgeMs is 0', () => {
    for (const snapshots of [new DirectorySnapshots(0), new DirectorySnapshots(10, 0)]) {
      snapshots.set('d', OLD, [], NOW, 'g');
      expect(snapshots.has('d')).toBe(false);
    }
  });
});
