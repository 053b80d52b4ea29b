/**
 * The `MemoryStore` contract: everything a storage backend must do for the memory tool.
 *
 * A reader learns the whole contract from this file. Backends: `InMemoryStore` and
 * `FileSystemStore` (this package), `RedisMemoryStore` (`@baton/storage-redis`). Every backend
 * must pass the conformance suite exported from `@baton/core/testing`.
 *
 * ## Paths
 * Stores never see the virtual `/memories` prefix. The handler validates and canonicalises every
 * path first (see `path-policy.ts`) and hands the store a `StorePath`: the part below the root,
 * with `/` separators, no leading or trailing slash, no `.`/`..` segments, no empty segments.
 * The root itself is the empty string `''`. Example: `/memories/notes/a.md` -> `'notes/a.md'`.
 * Stores may rely on that shape, but a backend that maps paths onto something that can escape
 * (a filesystem with symlinks) must still defend its own root.
 *
 * ## Directories
 * Directories exist implicitly as parents of files and explicitly once created by a write into
 * them; a write creates missing parent directories. The root always exists, even when empty.
 * Deleting the last file of a directory does not delete the directory.
 *
 * ## Errors
 * Every failure is a `StoreError` with a `code` from `StoreErrorCode`. Messages never contain
 * host paths: the handler turns codes into protocol strings for the model.
 * A `quota_exceeded` error also names the `limit` and its value (`maximum`), which the handler
 * quotes; the message itself is for logs and is never parsed.
 *
 * ## Concurrency
 * Each method is atomic on its own: a reader sees the old state or the new one, never a mix,
 * and a crash mid-call leaves one of the two. `edit` is the read-modify-write primitive: the
 * store guarantees that concurrent `edit`s of one file never lose an update (by locking, by
 * compare-and-set with retries, or by any other means). Because a store may retry, the
 * `transform` passed to `edit` must be a pure function of the current content.
 */

/** What is at a path. */
export type EntryKind = 'file' | 'directory';

/** Metadata of one entry. */
export interface EntryStat {
  /** File or directory. */
  kind: EntryKind;
  /** Size in bytes of a file's UTF-8 content; for a directory, the backend's nominal size (4096 on every store here, like `du` on ext4). */
  size: number;
  /** Last modification, milliseconds since the epoch. */
  modifiedAt: number;
}

/** One entry returned by `list`. */
export interface ListedEntry extends EntryStat {
  /** The entry's `StorePath` (relative to the store root, never `''`). */
  path: string;
  /** 1 for a direct child of the listed directory, 2 for a grandchild, ... */
  depth: number;
}

/** Optional information about who is mutating, for change feeds and history. Stores may ignore it. */
export interface MutationContext {
  /** The memory command that caused the mutation (`create`, `str_replace`, ...). */
  command?: string;
  /** Session or actor id, recorded in change feeds. */
  session?: string | undefined;
}

/** Options of `MemoryStore.write`. */
export interface WriteOptions extends MutationContext {
  /** `create`: fail with `exists` if anything is at the path. `overwrite`: replace a file (fail with `is_directory` on a directory). */
  mode: 'create' | 'overwrite';
}

/** Options of `MemoryStore.list`. */
export interface ListOptions {
  /** How many levels below the listed directory to return: 1 = direct children only. */
  depth: number;
  /**
   * Skip entries whose name starts with `.` or equals `node_modules`, and everything below them.
   * The memory tool's view always sets this; export and other tooling do not.
   */
  skipHidden?: boolean;
}

/** Result of a successful `edit`. */
export interface EditResult {
  /** Content before the transform ran (the version the transform saw). */
  before: string;
  /** Content now stored. */
  after: string;
}

/** Storage usage, for quotas and dashboards. */
export interface StoreUsage {
  /** Sum of file sizes in bytes. */
  bytes: number;
  /** Number of files (directories not counted). */
  files: number;
}

/** Limits a store enforces atomically on every write and edit. `undefined` = unlimited. */
export interface StoreLimits {
  /** Largest single file in bytes. */
  maxFileBytes?: number;
  /** Largest total of all file sizes in bytes. */
  maxTotalBytes?: number;
  /** Most files in the store. */
  maxFiles?: number;
}

/** The storage contract behind the memory tool. */
export interface MemoryStore {
  /** File content as UTF-8 text, or `null` if nothing is at `path`. Throws `is_directory` for a directory. */
  read(path: string): Promise<string | null>;

  /** Metadata of `path`, or `null` if nothing is there. `stat('')` is the root and never `null`. */
  stat(path: string): Promise<EntryStat | null>;

  /**
   * Write a whole file, creating missing parent directories.
   * Throws `exists` (create mode, anything at path), `is_directory` (overwrite of a directory),
   * `not_a_directory` (a parent is a file), `quota_exceeded`.
   */
  write(path: string, content: string, options: WriteOptions): Promise<void>;

  /**
   * Atomically replace a file's content with `transform(current)`. No concurrent edit or write of
   * the same file is lost. Errors thrown by `transform` propagate unchanged and nothing is written.
   * Throws `not_found` (missing), `is_directory`, `quota_exceeded`.
   */
  edit(
    path: string,
    transform: (current: string) => string,
    context?: MutationContext,
  ): Promise<EditResult>;

  /**
   * Entries below directory `path` up to `options.depth` levels, sorted by path (code-unit
   * order), parents before children. Throws `not_found` (missing), `not_a_directory` (a file).
   */
  list(path: string, options: ListOptions): Promise<ListedEntry[]>;

  /** Delete a file, or a directory with everything below it. Throws `not_found`; `invalid_path` for the root. */
  delete(path: string, context?: MutationContext): Promise<void>;

  /**
   * Move a file or a directory (with all descendants) to `to`, creating missing parents of `to`.
   * Never overwrites: throws `exists` if anything is at `to`; with concurrent renames onto one
   * destination exactly one wins. Throws `not_found` (source missing), `into_itself` (a directory
   * into its own subtree), `invalid_path` (root as source or destination), `not_a_directory`.
   */
  rename(from: string, to: string, context?: MutationContext): Promise<void>;

  /** Current usage. */
  usage(): Promise<StoreUsage>;

  /** Release resources the store opened itself (connections, handles). Idempotent. */
  close(): Promise<void>;
}

/** Why a store call failed. */
export type StoreErrorCode =
  | 'not_found'
  | 'exists'
  | 'is_directory'
  | 'not_a_directory'
  | 'into_itself'
  | 'invalid_path'
  | 'quota_exceeded'
  | 'conflict'
  | 'unavailable'
  /**
   * The backend holds data the store cannot read as its own (a Redis key of the wrong type): the
   * call changed nothing, and retrying will not help until an operator repairs or removes it.
   */
  | 'corrupt';

/** Options of `StoreError`. */
export interface StoreErrorOptions {
  /** The underlying error, when wrapping one. */
  cause?: unknown;
  /** For `quota_exceeded`: which limit. */
  limit?: keyof StoreLimits | undefined;
  /** For `quota_exceeded`: the value of that limit (bytes or files), when the store knows it. */
  maximum?: number | undefined;
}

/** The only error type a `MemoryStore` throws. Messages never contain host paths. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: StoreErrorCode;
  /** For `quota_exceeded`: which limit was hit. */
  readonly limit: keyof StoreLimits | undefined;
  /**
   * For `quota_exceeded`: the value of the limit that was hit. The handler quotes it to the
   * model, so it travels as a number rather than inside the backend's own sentence.
   */
  readonly maximum: number | undefined;

  constructor(code: StoreErrorCode, message: string, options: StoreErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.limit = options.limit;
    this.maximum = options.maximum;
  }
}

/** True if `error` is a `StoreError`, optionally with the given code. */
export function isStoreError(error: unknown, code?: StoreErrorCode): error is StoreError {
  return error instanceof StoreError && (code === undefined || error.code === code);
}
