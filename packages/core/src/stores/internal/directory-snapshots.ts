import type { Stats } from 'node:fs';

/**
 * Cached listings of directories for `FileSystemStore.list`, so a view of a big directory that
 * has not changed costs one `lstat` of the directory instead of one per entry.
 *
 * A snapshot of directory D holds D's entries with the stats of its files, and is trusted while
 * D itself looks unchanged: same inode, mtime and ctime. Every change of D's entries (create,
 * the temp-file rename of an overwrite or edit, delete, rename in or out) sets D's mtime, so
 * a later change shows. Subdirectory entries keep only their name: their own stats change
 * without D changing, so the caller `lstat`s them live.
 *
 * Racy snapshots: file times come from a coarse kernel clock (one tick, up to 10 ms; a whole
 * second or two on some filesystems), so a change within the same tick as the snapshot's mtime
 * may leave the mtime as it was. A snapshot whose directory changed less than `RACY_MS` before
 * it was taken is therefore only trusted while the store's generation token (rewritten by every
 * store mutation, in any process) is the one it was taken under. Changes made by programs other
 * than a `FileSystemStore` within that window are not detected until the directory changes again
 * (documented in docs/memory-store.md, like git's "racy" index entries).
 *
 * Files changed in place by other programs (an editor appending to a file) do not change the
 * directory at all, and a store mutation in the directory only patches the entry it changed. So
 * a snapshot is also dropped `maxAgeMs` after its entries were read: changes made by programs
 * other than a `FileSystemStore` show in a listing at most that late.
 */

/** One cached entry of a directory. Files carry their stats; directories only their kind. */
export type SnapshotEntry =
  | { name: string; kind: 'file'; size: number; modifiedAt: number }
  | { name: string; kind: 'directory' };

/** A directory's identity: what changes whenever its entries change. */
interface DirectoryIdentity {
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
}

interface Snapshot extends DirectoryIdentity {
  /** Entries, sorted by name in code-unit order. */
  entries: SnapshotEntry[];
  /** When the entries were read from the disk (epoch ms); patches do not change it. */
  readAt: number;
  /** Set for a racy snapshot: trusted only while the store's generation token equals it. */
  generation: string | undefined;
}

/** A directory's mtime or ctime closer than this to the time of the snapshot makes it racy. */
export const RACY_MS = 2_000;

/** Default bound of the cached entries over all directories (about 100 bytes each). */
const DEFAULT_SNAPSHOT_ENTRIES = 50_000;

/** Default age after which a directory is read again from the disk. */
const DEFAULT_SNAPSHOT_MAX_AGE_MS = 10_000;

/** Marks snapshots patched by a mutation whose new generation token is not written yet. */
const PENDING = '\u0000pending';

export class DirectorySnapshots {
  readonly #maxEntries: number;
  readonly #maxAgeMs: number;
  /** Map order is least recently used first. */
  readonly #snapshots = new Map<string, Snapshot>();
  #entries = 0;

  constructor(maxEntries = DEFAULT_SNAPSHOT_ENTRIES, maxAgeMs = DEFAULT_SNAPSHOT_MAX_AGE_MS) {
    for (const [name, value] of [
      ['listingCacheEntries', maxEntries],
      ['listingCacheMaxAgeMs', maxAgeMs],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}.`);
      }
    }
    this.#maxEntries = maxEntries;
    this.#maxAgeMs = maxAgeMs;
  }

  has(directory: string): boolean {
    return this.#snapshots.has(directory);
  }

  /** Drops the snapshot of `directory` (not of the directories below it). */
  drop(directory: string): void {
    const snapshot = this.#snapshots.get(directory);
    if (snapshot !== undefined) this.#remove(directory, snapshot);
  }

  /**
   * The cached entries of `directory` if its snapshot is still valid for `stats` (a fresh
   * `lstat` of it); drops an invalid snapshot. `generation` reads the store's token (lazily:
   * only racy snapshots need it).
   */
  get(directory: string, stats: Stats, generation: () => string): SnapshotEntry[] | undefined {
    const snapshot = this.#snapshots.get(directory);
    if (snapshot === undefined) return undefined;
    if (
      Date.now() - snapshot.readAt > this.#maxAgeMs ||
      !sameIdentity(snapshot, stats) ||
      (snapshot.generation !== undefined && snapshot.generation !== generation())
    ) {
      this.#remove(directory, snapshot);
      return undefined;
    }
    this.#snapshots.delete(directory);
    this.#snapshots.set(directory, snapshot);
    return snapshot.entries;
  }

  /**
   * Stores the entries of `directory`, read after `stats` was taken at `takenAt` (epoch ms,
   * before reading the entries) under the store generation `generation`.
   */
  set(
    directory: string,
    stats: Stats,
    entries: SnapshotEntry[],
    takenAt: number,
    generation: string,
  ): void {
    const existing = this.#snapshots.get(directory);
    if (existing !== undefined) this.#remove(directory, existing);
    if (this.#maxAgeMs === 0 || this.#maxEntries === 0 || entries.length > this.#maxEntries) {
      return;
    }
    const snapshot: Snapshot = {
      ...identityOf(stats),
      entries,
      readAt: takenAt,
      generation: isRacy(stats, takenAt) ? generation : undefined,
    };
    this.#snapshots.set(directory, snapshot);
    this.#entries += entries.length;
    for (const [oldest, victim] of this.#snapshots) {
      if (this.#entries <= this.#maxEntries) break;
      this.#remove(oldest, victim);
    }
  }

  /**
   * Before a mutation changes the entries of `directory` (store lock held, `generation` the
   * token read under the lock): keeps its snapshot only if it is valid now, so that the change
   * can be patched into it afterwards. Returns whether a valid snapshot is kept.
   */
  prepareChange(directory: string, stats: Stats | undefined, generation: string): boolean {
    const snapshot = this.#snapshots.get(directory);
    if (snapshot === undefined) return false;
    if (
      stats === undefined ||
      !sameIdentity(snapshot, stats) ||
      (snapshot.generation !== undefined && snapshot.generation !== generation)
    ) {
      this.#remove(directory, snapshot);
      return false;
    }
    return true;
  }

  /**
   * After a mutation changed `name` in `directory` (prepared with `prepareChange`): records the
   * entry's new state (`undefined`: removed) and the directory's new identity. The snapshot is
   * racy now (the directory just changed) and pending until `commit` gives it the new token.
   */
  patch(
    directory: string,
    directoryStats: Stats | undefined,
    name: string,
    entry: SnapshotEntry | undefined,
  ): void {
    const snapshot = this.#snapshots.get(directory);
    if (snapshot === undefined) return;
    if (directoryStats === undefined) {
      this.#remove(directory, snapshot);
      return;
    }
    const index = findName(snapshot.entries, name);
    const found = index < snapshot.entries.length && snapshot.entries[index]!.name === name;
    if (entry === undefined) {
      if (found) {
        snapshot.entries.splice(index, 1);
        this.#entries -= 1;
      }
    } else if (found) {
      snapshot.entries[index] = entry;
    } else {
      snapshot.entries.splice(index, 0, entry);
      this.#entries += 1;
    }
    Object.assign(snapshot, identityOf(directoryStats));
    snapshot.generation = PENDING;
  }

  /** Drops the snapshots of `path` and of every directory below it. */
  dropTree(path: string): void {
    const below = path === '' ? '' : `${path}/`;
    for (const [directory, snapshot] of this.#snapshots) {
      if (directory === path || directory.startsWith(below)) this.#remove(directory, snapshot);
    }
  }

  /**
   * After a mutation that held the store lock from token `before` and wrote token `after`: only
   * this process changed anything in between, and every directory it changed was patched or
   * dropped, so racy snapshots valid under `before` are valid under `after`. `after` undefined
   * (the token could not be written, or the mutation failed): drop every racy snapshot.
   */
  commit(before: string, after: string | undefined): void {
    for (const [directory, snapshot] of this.#snapshots) {
      if (snapshot.generation === undefined) continue;
      if (
        after !== undefined &&
        (snapshot.generation === before || snapshot.generation === PENDING)
      ) {
        snapshot.generation = after;
      } else {
        this.#remove(directory, snapshot);
      }
    }
  }

  clear(): void {
    this.#snapshots.clear();
    this.#entries = 0;
  }

  #remove(directory: string, snapshot: Snapshot): void {
    this.#snapshots.delete(directory);
    this.#entries -= snapshot.entries.length;
  }
}

/** The cached form of a directory entry from its `lstat`. */
export function snapshotEntry(name: string, stats: Stats): SnapshotEntry | undefined {
  if (stats.isFile()) return { name, kind: 'file', size: stats.size, modifiedAt: stats.mtimeMs };
  if (stats.isDirectory()) return { name, kind: 'directory' };
  return undefined;
}

function identityOf(stats: Stats): DirectoryIdentity {
  return { ino: stats.ino, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs };
}

function sameIdentity(identity: DirectoryIdentity, stats: Stats): boolean {
  return (
    identity.ino === stats.ino &&
    identity.mtimeMs === stats.mtimeMs &&
    identity.ctimeMs === stats.ctimeMs
  );
}

function isRacy(stats: Stats, takenAt: number): boolean {
  return takenAt - Math.max(stats.mtimeMs, stats.ctimeMs) < RACY_MS;
}

/** Index of `name` in entries sorted by name, or where it would be inserted. */
function findName(entries: SnapshotEntry[], name: string): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (entries[middle]!.name < name) low = middle + 1;
    else high = middle;
  }
  return low;
}
