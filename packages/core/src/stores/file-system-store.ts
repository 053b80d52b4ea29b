import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { chmod, mkdir, readdir, realpath, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  StoreError,
  type EditResult,
  type EntryStat,
  type ListOptions,
  type ListedEntry,
  type MemoryStore,
  type MutationContext,
  type StoreLimits,
  type StoreUsage,
  type WriteOptions,
} from '../store.js';
import {
  FILE_SYSTEM_STORE_RESERVED_NAME,
  type FileSystemStoreOptions,
} from './file-system-store-options.js';
import { AsyncMutex } from './internal/async-mutex.js';
import { DirectorySnapshots } from './internal/directory-snapshots.js';
import { syncDirectory, writeFileAtomically } from './internal/durable-files.js';
import { PROCESS_TOKEN, acquireFileLock, isOwnerGone } from './internal/file-lock.js';
import { measureTree } from './internal/file-tree.js';
import { collectListing, prepareListingChange, type ListingTree } from './internal/listing.js';
import { errnoCode, toStoreError } from './internal/fs-errors.js';
import {
  assertUserPath,
  isSystemError,
  notAFileError,
  notFoundError,
  ownerOfTempName,
  symlinkError,
  toEntryStat,
} from './internal/fs-store-checks.js';
import { assertWithinLimits, validateLimits } from './internal/store-limits.js';
import { ancestorsOf, compareCodeUnits, isBelow, parentOf } from './internal/store-paths.js';

export {
  FILE_SYSTEM_STORE_RESERVED_NAME,
  type FileSystemStoreOptions,
} from './file-system-store-options.js';

/** The result of walking a path's ancestors. */
type AncestorState =
  { status: 'present' } | { status: 'missing'; missing: string[] } | { status: 'below_file' };

/** One in-process mutex per real root, so two store instances on one root in one process also serialise. */
const ROOT_MUTEXES = new Map<string, AsyncMutex>();

/**
 * The embedded default `MemoryStore`: one file on disk per memory file, below `root`.
 *
 * - Atomic and durable: every file write goes to a temp file (same filesystem), is fsynced, then
 *   renamed over the target (overwrite) or hard-linked to it (create: `link()` fails if anything
 *   is there, so two creators have one winner); the directory is fsynced after every change of
 *   its entries (skipped with `durability: 'data'`). A directory delete is one `rename()` into
 *   the trash, then removal.
 * - Concurrency: every mutation holds the store lock: an in-process FIFO mutex plus a lock file
 *   (O_EXCL) shared by every process on the host using this root, with stale-lock recovery. That
 *   makes `edit`, rename-without-overwrite and limits exact across processes. Reads take no
 *   lock; `list` takes the in-process mutex only.
 * - Security: no symbolic link is ever followed; a path through one is refused with
 *   `invalid_path` and `list` skips them. Files are 0600, directories 0700. No error message
 *   contains a host path.
 *
 * The guarantees, their costs and their limits are documented in docs/memory-store.md.
 */
export class FileSystemStore implements MemoryStore {
  readonly #root: string;
  readonly #internal: string;
  readonly #temp: string;
  readonly #owners: string;
  readonly #lockPath: string;
  readonly #generationPath: string;
  readonly #limits: StoreLimits;
  readonly #lockTimeoutMs: number;
  readonly #lockStaleMs: number;
  readonly #syncDirectories: boolean;
  readonly #mutex: AsyncMutex;
  readonly #snapshots: DirectorySnapshots;
  /** The listing cache with this store's paths, for `collectListing` and `prepareListingChange`. */
  readonly #tree: ListingTree;
  #usage: StoreUsage | undefined;
  #generation = '';
  /** The generation token read when the current mutation took the store lock. */
  #lockedGeneration = '';
  #dirty = false;
  #closed = false;
  #tempCounter = 0;

  /** Use `createFileSystemStore`, which prepares the root first. */
  constructor(realRoot: string, options: Omit<FileSystemStoreOptions, 'root'> = {}) {
    this.#root = realRoot;
    this.#internal = join(realRoot, FILE_SYSTEM_STORE_RESERVED_NAME);
    this.#temp = join(this.#internal, 'tmp');
    this.#owners = join(this.#internal, 'owners');
    this.#lockPath = join(this.#internal, 'store.lock');
    this.#generationPath = join(this.#internal, 'generation');
    this.#limits = validateLimits(options.limits);
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.#lockStaleMs = options.lockStaleMs ?? 30_000;
    const durability = options.durability ?? 'full';
    if (durability !== 'full' && durability !== 'data') {
      throw new TypeError(`durability must be 'full' or 'data', got ${String(durability)}.`);
    }
    this.#syncDirectories = durability === 'full';
    this.#snapshots = new DirectorySnapshots(
      options.listingCacheEntries,
      options.listingCacheMaxAgeMs,
    );
    this.#tree = { snapshots: this.#snapshots, host: (path) => this.#host(path) };
    let mutex = ROOT_MUTEXES.get(realRoot);
    if (mutex === undefined) {
      mutex = new AsyncMutex();
      ROOT_MUTEXES.set(realRoot, mutex);
    }
    this.#mutex = mutex;
  }

  /** Creates the internal directories and removes what crashed writers left behind. */
  async prepare(): Promise<void> {
    this.#ensureInternalDirectories();
    // Temp files and trash (`<token>.<n>.<kind>`) and lock owner files (`<token>`) of processes
    // that are gone.
    for (const directory of [this.#temp, this.#owners]) {
      const leftovers = await readdir(directory);
      await Promise.all(
        leftovers
          .filter((name) => isOwnerGone(ownerOfTempName(name)))
          .map((name) => rm(join(directory, name), { recursive: true, force: true })),
      );
    }
  }

  async read(path: string): Promise<string | null> {
    this.#assertOpen();
    assertUserPath(path);
    if (path === '') throw new StoreError('is_directory', 'The path is a directory, not a file.');
    try {
      const ancestors = await this.#inspectAncestors(path);
      if (ancestors.status !== 'present') return null;
      // O_NONBLOCK: opening a FIFO planted in the root must not hang; no effect on regular files.
      const descriptor = openSync(
        this.#host(path),
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      );
      try {
        const stats = fstatSync(descriptor);
        if (stats.isDirectory()) {
          throw new StoreError('is_directory', 'The path is a directory, not a file.');
        }
        if (!stats.isFile()) throw notAFileError();
        return readFileSync(descriptor, 'utf8');
      } finally {
        closeSync(descriptor);
      }
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw toStoreError(error);
    }
  }

  async stat(path: string): Promise<EntryStat | null> {
    this.#assertOpen();
    assertUserPath(path);
    try {
      if (path !== '' && (await this.#inspectAncestors(path)).status !== 'present') return null;
      const stats = await this.#lstatEntry(path);
      return stats === null ? null : toEntryStat(stats);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async write(path: string, content: string, options: WriteOptions): Promise<void> {
    this.#assertOpen();
    assertUserPath(path);
    if (path === '') {
      throw new StoreError(
        options.mode === 'create' ? 'exists' : 'is_directory',
        'The root is a directory.',
      );
    }
    const bytes = Buffer.from(content, 'utf8');
    await this.#mutate(async () => {
      const ancestors = await this.#inspectAncestors(path);
      if (ancestors.status === 'below_file') {
        throw new StoreError('not_a_directory', 'A parent of the path is a file.');
      }
      const existing = ancestors.status === 'present' ? await this.#lstatEntry(path) : null;
      if (existing !== null && options.mode === 'create') {
        throw new StoreError('exists', 'Something already exists at the path.');
      }
      if (existing?.isDirectory() === true) {
        throw new StoreError('is_directory', 'The path is a directory, not a file.');
      }
      if (existing !== null && !existing.isFile()) throw notAFileError();
      const usage = await this.#currentUsage();
      const oldSize = existing?.size ?? 0;
      const next = {
        bytes: usage.bytes - oldSize + bytes.length,
        files: usage.files + (existing === null ? 1 : 0),
      };
      assertWithinLimits(this.#limits, {
        fileBytes: bytes.length,
        totalBytes: next.bytes,
        files: next.files,
      });
      this.#dirty = true;
      if (ancestors.status === 'missing') await this.#makeDirectories(ancestors.missing);
      const patch = this.#prepareChange(path);
      await this.#writeAtomically(
        this.#host(path),
        bytes,
        existing === null ? 'create' : 'replace',
      );
      this.#usage = next;
      patch();
    });
  }

  async edit(
    path: string,
    transform: (current: string) => string,
    _context?: MutationContext,
  ): Promise<EditResult> {
    this.#assertOpen();
    assertUserPath(path);
    if (path === '') throw new StoreError('is_directory', 'The path is a directory, not a file.');
    return this.#mutate(async () => {
      if ((await this.#inspectAncestors(path)).status !== 'present') throw notFoundError();
      const existing = await this.#lstatEntry(path);
      if (existing === null) throw notFoundError();
      if (existing.isDirectory()) {
        throw new StoreError('is_directory', 'The path is a directory, not a file.');
      }
      if (!existing.isFile()) throw notAFileError();
      const descriptor = openSync(this.#host(path), constants.O_RDONLY | constants.O_NOFOLLOW);
      let before: string;
      try {
        before = readFileSync(descriptor, 'utf8');
      } finally {
        closeSync(descriptor);
      }
      // We hold the store lock, so `before` is current and nothing can change it until we write.
      const after = transform(before);
      if (typeof after !== 'string') throw new TypeError('An edit transform must return a string.');
      const bytes = Buffer.from(after, 'utf8');
      const usage = await this.#currentUsage();
      const next = { bytes: usage.bytes - existing.size + bytes.length, files: usage.files };
      assertWithinLimits(this.#limits, {
        fileBytes: bytes.length,
        totalBytes: next.bytes,
        files: next.files,
      });
      this.#dirty = true;
      const patch = this.#prepareChange(path);
      await this.#writeAtomically(this.#host(path), bytes, 'replace');
      this.#usage = next;
      patch();
      return { before, after };
    });
  }

  async list(path: string, options: ListOptions): Promise<ListedEntry[]> {
    this.#assertOpen();
    assertUserPath(path);
    // The in-process mutex makes a listing atomic against this process's own mutations.
    return this.#mutex.run(async () => {
      try {
        if (path !== '' && (await this.#inspectAncestors(path)).status !== 'present') {
          throw notFoundError();
        }
        const stats = await this.#lstatEntry(path);
        if (stats === null) throw notFoundError();
        if (!stats.isDirectory()) {
          throw new StoreError('not_a_directory', 'The path is a file, not a directory.');
        }
        const entries: ListedEntry[] = [];
        let generation: string | undefined;
        const readGeneration = (): string => (generation ??= this.#readGeneration());
        collectListing(this.#tree, {
          directory: path,
          stats,
          depth: 1,
          options,
          into: entries,
          generation: readGeneration,
        });
        return entries.sort((left, right) => compareCodeUnits(left.path, right.path));
      } catch (error) {
        throw toStoreError(error);
      }
    });
  }

  async delete(path: string, _context?: MutationContext): Promise<void> {
    this.#assertOpen();
    assertUserPath(path);
    if (path === '') throw new StoreError('invalid_path', 'The root cannot be deleted.');
    let trash: string | undefined;
    await this.#mutate(async () => {
      if ((await this.#inspectAncestors(path)).status !== 'present') throw notFoundError();
      const existing = await this.#lstatEntry(path);
      if (existing === null) throw notFoundError();
      const usage = await this.#currentUsage();
      const host = this.#host(path);
      if (existing.isDirectory()) {
        const removed = measureTree(this.#root, host);
        this.#dirty = true;
        const patch = this.#prepareChange(path);
        // One rename makes the whole subtree disappear at once; removal happens afterwards.
        trash = this.#tempPath('trash');
        renameSync(host, trash);
        this.#snapshots.dropTree(path);
        patch();
        await this.#syncDirectory(dirname(host));
        this.#usage = { bytes: usage.bytes - removed.bytes, files: usage.files - removed.files };
      } else {
        this.#dirty = true;
        const patch = this.#prepareChange(path);
        unlinkSync(host);
        patch();
        await this.#syncDirectory(dirname(host));
        this.#usage = {
          bytes: usage.bytes - (existing.isFile() ? existing.size : 0),
          files: usage.files - (existing.isFile() ? 1 : 0),
        };
      }
    });
    // Outside the lock: other writers need not wait for a large tree to be removed.
    if (trash !== undefined)
      await rm(trash, { recursive: true, force: true }).catch(() => undefined);
  }

  async rename(from: string, to: string, _context?: MutationContext): Promise<void> {
    this.#assertOpen();
    assertUserPath(from);
    assertUserPath(to);
    if (from === '' || to === '') {
      throw new StoreError('invalid_path', 'The root cannot be renamed or replaced.');
    }
    await this.#mutate(async () => {
      if ((await this.#inspectAncestors(from)).status !== 'present') throw notFoundError('source');
      const source = await this.#lstatEntry(from);
      if (source === null) throw notFoundError('source');
      if (source.isDirectory() && isBelow(to, from)) {
        throw new StoreError('into_itself', 'A directory cannot be moved into itself.');
      }
      const destination = await this.#inspectAncestors(to);
      if (destination.status === 'below_file') {
        throw new StoreError('not_a_directory', 'A parent of the destination is a file.');
      }
      // rename(2) would replace a file or an empty directory: the store lock plus this check is
      // what makes "never overwrite" hold (see docs/memory-store.md).
      if (destination.status === 'present' && (await this.#lstatEntry(to)) !== null) {
        throw new StoreError('exists', 'Something already exists at the destination.');
      }
      this.#dirty = true;
      if (destination.status === 'missing') await this.#makeDirectories(destination.missing);
      const fromHost = this.#host(from);
      const toHost = this.#host(to);
      // Rare and possibly a whole tree: forget the listings involved instead of patching them.
      for (const directory of [parentOf(from), parentOf(to)]) this.#snapshots.drop(directory);
      this.#snapshots.dropTree(from);
      this.#snapshots.dropTree(to);
      renameSync(fromHost, toHost);
      await this.#syncDirectory(dirname(toHost));
      if (dirname(fromHost) !== dirname(toHost)) await this.#syncDirectory(dirname(fromHost));
    });
  }

  async usage(): Promise<StoreUsage> {
    this.#assertOpen();
    // Fast path without the lock (the memory tool asks before every write): a valid cache is as
    // good an answer as a locked count taken a moment earlier.
    const cached = this.#usage;
    if (cached !== undefined) {
      const generation = this.#readGeneration();
      if (generation === this.#generation && this.#usage === cached) return { ...cached };
    }
    return this.#mutate(async () => ({ ...(await this.#currentUsage()) }));
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  /** Runs `body` holding the store lock (in-process mutex, then the cross-process lock file). */
  async #mutate<T>(body: () => Promise<T>): Promise<T> {
    return this.#mutex.run(async () => {
      let release;
      try {
        release = await this.#lock();
      } catch (error) {
        // Someone removed the store's own directory: put it back, once.
        if (errnoCode(error) !== 'ENOENT') throw toStoreError(error);
        try {
          this.#ensureInternalDirectories();
          release = await this.#lock();
        } catch (retryError) {
          throw toStoreError(retryError);
        }
      }
      this.#dirty = false;
      let failed = false;
      try {
        if (!existsSync(this.#temp)) this.#ensureInternalDirectories();
        this.#checkGeneration();
        return await body();
      } catch (error) {
        failed = true;
        // Something may have changed on disk: recount next time rather than trust the cache.
        if (this.#dirty) this.#usage = undefined;
        // Only filesystem errors are translated; an edit transform's own error propagates as is.
        throw isSystemError(error) ? toStoreError(error) : error;
      } finally {
        // Also after a failure half-way: other processes must not trust their caches either.
        if (this.#dirty) {
          const written = this.#bumpGeneration();
          this.#snapshots.commit(this.#lockedGeneration, failed ? undefined : written);
        }
        await release();
      }
    });
  }

  #lock(): Promise<() => Promise<void>> {
    return acquireFileLock(this.#lockPath, {
      timeoutMs: this.#lockTimeoutMs,
      staleMs: this.#lockStaleMs,
      // Named after this process, so `prepare` removes it once we are gone.
      ownerPath: join(this.#owners, PROCESS_TOKEN),
    });
  }

  #ensureInternalDirectories(): void {
    for (const directory of [this.#temp, this.#owners]) {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      chmodSync(directory, 0o700);
    }
    chmodSync(this.#internal, 0o700);
  }

  /**
   * Called with the store lock held. The usage cache is valid while the generation file still
   * holds the token this process wrote last (or read when it counted). Any other process's
   * mutation changes the token.
   */
  #checkGeneration(): void {
    const current = this.#readGeneration();
    this.#lockedGeneration = current;
    if (this.#usage !== undefined && current !== this.#generation) this.#usage = undefined;
  }

  /** Writes a fresh generation token; returns it, or undefined if it could not be written. */
  #bumpGeneration(): string | undefined {
    // Not fsynced on purpose: after a machine crash no process has a cache left to validate.
    const token = `${PROCESS_TOKEN}-${randomBytes(4).toString('hex')}`;
    try {
      writeFileSync(this.#generationPath, token, { mode: 0o600 });
      this.#generation = token;
      return token;
    } catch {
      this.#usage = undefined;
      return undefined;
    }
  }

  #readGeneration(): string {
    try {
      return readFileSync(this.#generationPath, 'utf8');
    } catch {
      return '';
    }
  }

  /** Usage from the cache, or counted by walking the whole tree (O(files)) and cached. */
  async #currentUsage(): Promise<StoreUsage> {
    if (this.#usage !== undefined) return this.#usage;
    const generation = this.#readGeneration();
    const usage = measureTree(this.#root);
    this.#usage = usage;
    this.#generation = generation;
    return usage;
  }

  /** `prepareListingChange` for `path`, under the generation this mutation's lock found. */
  #prepareChange(path: string): () => void {
    return prepareListingChange(this.#tree, path, this.#lockedGeneration);
  }

  /**
   * Walks the ancestors of `path` from the root with lstat: refuses a symbolic link anywhere, and
   * reports whether all exist, some are missing (to be created) or one is a file.
   */
  async #inspectAncestors(path: string): Promise<AncestorState> {
    const ancestors = ancestorsOf(path);
    for (const [index, ancestor] of ancestors.entries()) {
      const stats = lstatSync(this.#host(ancestor), { throwIfNoEntry: false }) ?? null;
      if (stats === null) return { status: 'missing', missing: ancestors.slice(index) };
      if (stats.isSymbolicLink()) throw symlinkError();
      if (!stats.isDirectory()) return { status: 'below_file' };
    }
    return { status: 'present' };
  }

  /** lstat of a store path; refuses a symbolic link. */
  async #lstatEntry(path: string): Promise<Stats | null> {
    const stats = lstatSync(this.#host(path), { throwIfNoEntry: false }) ?? null;
    if (stats?.isSymbolicLink() === true) throw symlinkError();
    return stats;
  }

  /** Creates `missing` (outermost first) with mode 0700, fsyncing each parent. */
  async #makeDirectories(missing: string[]): Promise<void> {
    // The first new directory changes its parent's entries; the others are new.
    if (missing[0] !== undefined) this.#snapshots.drop(parentOf(missing[0]));
    for (const directory of missing) {
      const host = this.#host(directory);
      try {
        mkdirSync(host, { mode: 0o700 });
        chmodSync(host, 0o700);
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST') throw error;
        if ((await this.#lstatEntry(directory))?.isDirectory() !== true) {
          throw new StoreError('not_a_directory', 'A parent of the path is a file.');
        }
      }
      await this.#syncDirectory(dirname(host));
    }
  }

  /** `writeFileAtomically` through a temp file of the store's own, then fsync of the directory. */
  async #writeAtomically(target: string, bytes: Buffer, mode: 'create' | 'replace'): Promise<void> {
    await writeFileAtomically(this.#tempPath('tmp'), target, bytes, mode);
    await this.#syncDirectory(dirname(target));
  }

  async #syncDirectory(host: string): Promise<void> {
    if (this.#syncDirectories) await syncDirectory(host);
  }

  /** A unique name in the temp directory whose prefix tells which process owns it. */
  #tempPath(kind: 'tmp' | 'trash'): string {
    this.#tempCounter += 1;
    return join(this.#temp, `${PROCESS_TOKEN}.${this.#tempCounter}.${kind}`);
  }

  #host(path: string): string {
    return path === '' ? this.#root : join(this.#root, ...path.split('/'));
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError('unavailable', 'The store is closed.');
  }
}

/**
 * Creates a `FileSystemStore` on `root` (made with mode 0700 if missing) and removes temp files
 * and trash that crashed writers left in the store's own directory.
 */
export async function createFileSystemStore(
  options: FileSystemStoreOptions,
): Promise<FileSystemStore> {
  const { root, ...rest } = options;
  const created = await mkdir(root, { recursive: true, mode: 0o700 });
  // An existing root keeps the mode its owner chose; a new one is 0700 whatever the umask.
  if (created !== undefined) await chmod(root, 0o700);
  const store = new FileSystemStore(await realpath(root), rest);
  await store.prepare();
  return store;
}
