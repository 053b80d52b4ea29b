import type { Stats } from 'node:fs';
import { StoreError, type EntryStat } from '../../store.js';
import { FILE_SYSTEM_STORE_RESERVED_NAME } from '../file-system-store-options.js';
import { DIRECTORY_SIZE, assertStorePath } from './store-paths.js';

/** Refuses the store's own directory as well as anything that is not a canonical store path. */
export function assertUserPath(path: string): void {
  assertStorePath(path);
  const first = path.split('/', 1)[0];
  if (first === FILE_SYSTEM_STORE_RESERVED_NAME) {
    throw new StoreError(
      'invalid_path',
      `The name ${FILE_SYSTEM_STORE_RESERVED_NAME} is reserved for the store's own files.`,
    );
  }
}

/** `<pid>-<nonce>.<n>.<kind>` (temp file) or `<pid>-<nonce>` (lock owner) -> `<pid>-<nonce>`. */
export function ownerOfTempName(name: string): string {
  return name.split('.', 1)[0] ?? '';
}

/** A Node system error (it carries the syscall), as opposed to an error thrown by user code. */
export function isSystemError(error: unknown): boolean {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    typeof (error as NodeJS.ErrnoException).syscall === 'string'
  );
}

export function toEntryStat(stats: Stats): EntryStat {
  return stats.isDirectory()
    ? { kind: 'directory', size: DIRECTORY_SIZE, modifiedAt: stats.mtimeMs }
    : { kind: 'file', size: stats.size, modifiedAt: stats.mtimeMs };
}

export function symlinkError(): StoreError {
  return new StoreError(
    'invalid_path',
    'The path goes through a symbolic link, which the store does not follow.',
  );
}

export function notAFileError(): StoreError {
  return new StoreError('invalid_path', 'The path is neither a regular file nor a directory.');
}

export function notFoundError(which = 'path'): StoreError {
  return new StoreError('not_found', `Nothing exists at the ${which}.`);
}
