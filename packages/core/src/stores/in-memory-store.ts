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
import { assertWithinLimits, validateLimits } from './internal/store-limits.js';
import {
  DIRECTORY_SIZE,
  ancestorsOf,
  assertStorePath,
  byteLength,
  compareCodeUnits,
  isBelow,
  isHiddenName,
  parentOf,
} from './internal/store-paths.js';

/** Options of `InMemoryStore`. */
export interface InMemoryStoreOptions {
  /** Limits enforced on every write and edit. Default: none. */
  limits?: StoreLimits | undefined;
}

type MemoryNode =
  | { kind: 'file'; content: string; size: number; modifiedAt: number }
  | { kind: 'directory'; modifiedAt: number };

/**
 * A `MemoryStore` held in one process's memory: for tests, demos and short-lived sessions.
 *
 * Every method does all of its work synchronously after its first line, so on one event loop
 * each call is atomic and concurrent `edit`s are serialised by construction: no locks needed.
 * Nothing survives the process.
 */
export class InMemoryStore implements MemoryStore {
  readonly #nodes = new Map<string, MemoryNode>();
  readonly #limits: StoreLimits;
  #bytes = 0;
  #files = 0;
  #closed = false;

  constructor(options: InMemoryStoreOptions = {}) {
    this.#limits = validateLimits(options.limits);
    this.#nodes.set('', { kind: 'directory', modifiedAt: Date.now() });
  }

  read(path: string): Promise<string | null> {
    return this.#run(() => {
      assertStorePath(path);
      const node = this.#nodes.get(path);
      if (node === undefined) return null;
      if (node.kind === 'directory') {
        throw new StoreError('is_directory', 'The path is a directory, not a file.');
      }
      return node.content;
    });
  }

  stat(path: string): Promise<EntryStat | null> {
    return this.#run(() => {
      assertStorePath(path);
      const node = this.#nodes.get(path);
      return node === undefined ? null : toStat(node);
    });
  }

  write(path: string, content: string, options: WriteOptions): Promise<void> {
    return this.#run(() => {
      assertStorePath(path);
      if (path === '') {
        throw new StoreError(
          options.mode === 'create' ? 'exists' : 'is_directory',
          'The root is a directory.',
        );
      }
      const existing = this.#nodes.get(path);
      if (options.mode === 'create' && existing !== undefined) {
        throw new StoreError('exists', 'Something already exists at the path.');
      }
      if (existing?.kind === 'directory') {
        throw new StoreError('is_directory', 'The path is a directory, not a file.');
      }
      this.#assertParentsCanBeDirectories(path);
      const size = byteLength(content);
      const oldSize = existing?.size ?? 0;
      assertWithinLimits(this.#limits, {
        fileBytes: size,
        totalBytes: this.#bytes - oldSize + size,
        files: this.#files + (existing === undefined ? 1 : 0),
      });
      const now = Date.now();
      this.#createParents(path, now);
      this.#nodes.set(path, { kind: 'file', content, size, modifiedAt: now });
      this.#bytes += size - oldSize;
      if (existing === undefined) this.#files += 1;
    });
  }

  edit(
    path: string,
    transform: (current: string) => string,
    _context?: MutationContext,
  ): Promise<EditResult> {
    return this.#run(() => {
      assertStorePath(path);
      const existing = this.#nodes.get(path);
      if (existing === undefined) throw new StoreError('not_found', 'Nothing exists at the path.');
      if (existing.kind === 'directory') {
        throw new StoreError('is_directory', 'The path is a directory, not a file.');
      }
      const before = existing.content;
      // No await between reading and storing: nothing else can run in between.
      const after = transform(before);
      if (typeof after !== 'string') {
        throw new TypeError('An edit transform must return a string.');
      }
      const size = byteLength(after);
      assertWithinLimits(this.#limits, {
        fileBytes: size,
        totalBytes: this.#bytes - existing.size + size,
        files: this.#files,
      });
      this.#nodes.set(path, { kind: 'file', content: after, size, modifiedAt: Date.now() });
      this.#bytes += size - existing.size;
      return { before, after };
    });
  }

  list(path: string, options: ListOptions): Promise<ListedEntry[]> {
    return this.#run(() => {
      assertStorePath(path);
      const node = this.#nodes.get(path);
      if (node === undefined) throw new StoreError('not_found', 'Nothing exists at the path.');
      if (node.kind === 'file') {
        throw new StoreError('not_a_directory', 'The path is a file, not a directory.');
      }
      const baseDepth = path === '' ? 0 : path.split('/').length;
      const entries: ListedEntry[] = [];
      for (const [entryPath, entryNode] of this.#nodes) {
        if (!isBelow(entryPath, path)) continue;
        const relative = path === '' ? entryPath : entryPath.slice(path.length + 1);
        const segments = relative.split('/');
        const depth = entryPath.split('/').length - baseDepth;
        if (depth > options.depth) continue;
        if (options.skipHidden === true && segments.some(isHiddenName)) continue;
        entries.push({ path: entryPath, depth, ...toStat(entryNode) });
      }
      return entries.sort((left, right) => compareCodeUnits(left.path, right.path));
    });
  }

  delete(path: string, _context?: MutationContext): Promise<void> {
    return this.#run(() => {
      assertStorePath(path);
      if (path === '') throw new StoreError('invalid_path', 'The root cannot be deleted.');
      const node = this.#nodes.get(path);
      if (node === undefined) throw new StoreError('not_found', 'Nothing exists at the path.');
      for (const [entryPath, entryNode] of [...this.#nodes]) {
        if (entryPath !== path && !isBelow(entryPath, path)) continue;
        this.#nodes.delete(entryPath);
        if (entryNode.kind === 'file') {
          this.#bytes -= entryNode.size;
          this.#files -= 1;
        }
      }
      this.#touch(parentOf(path));
    });
  }

  rename(from: string, to: string, _context?: MutationContext): Promise<void> {
    return this.#run(() => {
      assertStorePath(from);
      assertStorePath(to);
      if (from === '' || to === '') {
        throw new StoreError('invalid_path', 'The root cannot be renamed or replaced.');
      }
      const node = this.#nodes.get(from);
      if (node === undefined)
        throw new StoreError('not_found', 'Nothing exists at the source path.');
      if (node.kind === 'directory' && isBelow(to, from)) {
        throw new StoreError('into_itself', 'A directory cannot be moved into itself.');
      }
      if (this.#nodes.has(to)) {
        throw new StoreError('exists', 'Something already exists at the destination.');
      }
      this.#assertParentsCanBeDirectories(to);
      const now = Date.now();
      this.#createParents(to, now);
      const moved = [...this.#nodes].filter(
        ([entryPath]) => entryPath === from || isBelow(entryPath, from),
      );
      for (const [entryPath] of moved) this.#nodes.delete(entryPath);
      for (const [entryPath, entryNode] of moved) {
        this.#nodes.set(to + entryPath.slice(from.length), entryNode);
      }
      this.#touch(parentOf(from));
    });
  }

  usage(): Promise<StoreUsage> {
    return this.#run(() => ({ bytes: this.#bytes, files: this.#files }));
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  /** Runs a synchronous body as one atomic step, turning throws into rejections. */
  #run<T>(body: () => T): Promise<T> {
    try {
      if (this.#closed) throw new StoreError('unavailable', 'The store is closed.');
      return Promise.resolve(body());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  #assertParentsCanBeDirectories(path: string): void {
    for (const ancestor of ancestorsOf(path)) {
      if (this.#nodes.get(ancestor)?.kind === 'file') {
        throw new StoreError('not_a_directory', 'A parent of the path is a file.');
      }
    }
  }

  #createParents(path: string, now: number): void {
    for (const ancestor of ancestorsOf(path)) {
      if (!this.#nodes.has(ancestor))
        this.#nodes.set(ancestor, { kind: 'directory', modifiedAt: now });
    }
    this.#touch(parentOf(path), now);
  }

  #touch(directory: string, now = Date.now()): void {
    const node = this.#nodes.get(directory);
    if (node?.kind === 'directory') node.modifiedAt = now;
  }
}

/** Creates an `InMemoryStore`. */
export function createInMemoryStore(options: InMemoryStoreOptions = {}): InMemoryStore {
  return new InMemoryStore(options);
}

function toStat(node: MemoryNode): EntryStat {
  return node.kind === 'file'
    ? { kind: 'file', size: node.size, modifiedAt: node.modifiedAt }
    : { kind: 'directory', size: DIRECTORY_SIZE, modifiedAt: node.modifiedAt };
}
