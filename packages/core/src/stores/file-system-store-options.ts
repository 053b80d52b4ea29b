import type { StoreLimits } from '../store.js';

/**
 * The name of the store's own directory inside the root (temp files, trash, locks). No store path
 * may start with it: every method refuses it with `invalid_path` and `list` never shows it.
 */
export const FILE_SYSTEM_STORE_RESERVED_NAME = '.baton-store';

/** Options of `createFileSystemStore`. */
export interface FileSystemStoreOptions {
  /** Directory holding the memory files; created with mode 0700 if missing. */
  root: string;
  /** Limits enforced on every write and edit. Default: none. */
  limits?: StoreLimits | undefined;
  /** How long a mutation waits for another process's lock before failing with `conflict`. Default 10 000 ms. */
  lockTimeoutMs?: number;
  /** A lock file whose owner cannot be identified is broken after this long. Default 30 000 ms. */
  lockStaleMs?: number;
  /**
   * `full` (default): fsync the file before it is renamed or linked into place and fsync the
   * directory after every change of its entries, so an acknowledged mutation survives a power
   * cut. `data`: fsync file content only, like the SDK's reference implementation; still atomic
   * (never a torn or empty file), but a crash can roll back the last acknowledged mutations.
   */
  durability?: 'full' | 'data';
  /**
   * How many directory entries `list` keeps cached, over all directories, so a view of an
   * unchanged directory costs one `lstat` of the directory instead of one per entry (see
   * docs/memory-store.md, "Listing cache"). 0 turns the cache off. Default 50 000.
   */
  listingCacheEntries?: number;
  /**
   * A cached directory listing is read again from the disk after this long, so changes made to
   * the folder by programs other than a `FileSystemStore` (which may not change the directory's
   * time, like an in-place append) show in a listing at most this late. Changes made through any
   * `FileSystemStore`, in any process, show at once. 0 turns the cache off. Default 10 000 ms.
   */
  listingCacheMaxAgeMs?: number;
}
