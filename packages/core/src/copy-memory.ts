import { StoreError, type MemoryStore, type MutationContext } from './store.js';
import { createFileSystemStore } from './stores/file-system-store.js';

/** Options of `copyMemoryStore`, `exportMemoryToFolder` and `importMemoryFromFolder`. */
export interface CopyMemoryOptions {
  /**
   * A file that already exists in the target: `fail` (default) checks every path first and throws
   * `exists` before writing anything; `overwrite` replaces it; `skip` keeps the target's file.
   */
  onExisting?: 'fail' | 'overwrite' | 'skip';
  /** Recorded by stores with a change feed. Default `{ command: 'import' }`. */
  context?: MutationContext;
}

/** What a copy did. */
export interface CopyMemoryResult {
  /** Files written to the target. */
  files: number;
  /** Bytes written (UTF-8). */
  bytes: number;
  /** Files left alone because they existed (`onExisting: 'skip'`). */
  skipped: number;
}

/**
 * Copies every file of `source` (hidden ones included) into `target`, keeping paths. Works
 * between any two `MemoryStore`s: Redis to a folder, a folder to Redis, namespace to namespace;
 * it lives in core because it needs nothing but the contract.
 * Each file is one atomic write; the copy as a whole is not atomic (a quota or connection error
 * midway leaves the files copied so far). Empty directories are not copied: the store contract
 * has directories only as parents of files.
 */
export async function copyMemoryStore(
  source: MemoryStore,
  target: MemoryStore,
  options: CopyMemoryOptions = {},
): Promise<CopyMemoryResult> {
  const onExisting = options.onExisting ?? 'fail';
  const context = options.context ?? { command: 'import' };
  const files = (await source.list('', { depth: Number.MAX_SAFE_INTEGER })).filter(
    (entry) => entry.kind === 'file',
  );
  if (onExisting === 'fail') {
    for (const file of files) {
      if ((await target.stat(file.path)) !== null) {
        throw new StoreError(
          'exists',
          `${file.path} already exists in the target; nothing was copied.`,
        );
      }
    }
  }
  const result: CopyMemoryResult = { files: 0, bytes: 0, skipped: 0 };
  for (const file of files) {
    const content = await source.read(file.path);
    if (content === null) {
      continue; // deleted while copying
    }
    if (onExisting === 'skip' && (await target.stat(file.path)) !== null) {
      result.skipped += 1;
      continue;
    }
    await target.write(file.path, content, {
      ...context,
      mode: onExisting === 'overwrite' ? 'overwrite' : 'create',
    });
    result.files += 1;
    result.bytes += Buffer.byteLength(content);
  }
  return result;
}

/** Writes every file of `store` below `folder` (a `FileSystemStore` root, created 0700 if missing). */
export async function exportMemoryToFolder(
  store: MemoryStore,
  folder: string,
  options: CopyMemoryOptions = {},
): Promise<CopyMemoryResult> {
  const target = await createFileSystemStore({ root: folder });
  try {
    return await copyMemoryStore(store, target, { context: { command: 'export' }, ...options });
  } finally {
    await target.close();
  }
}

/** Reads every file below `folder` (as a `FileSystemStore` root) into `store`. */
export async function importMemoryFromFolder(
  store: MemoryStore,
  folder: string,
  options: CopyMemoryOptions = {},
): Promise<CopyMemoryResult> {
  const source = await createFileSystemStore({ root: folder });
  try {
    return await copyMemoryStore(source, store, options);
  } finally {
    await source.close();
  }
}
