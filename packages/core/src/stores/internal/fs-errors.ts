import { StoreError, type StoreErrorCode } from '../../store.js';

/** The errno code of a Node filesystem error, or `undefined`. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const { code } = error as { code: unknown };
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

const MESSAGES: Record<string, [StoreErrorCode, string]> = {
  ENOENT: ['not_found', 'Nothing exists at the path.'],
  ENOTDIR: ['not_a_directory', 'A parent of the path is a file.'],
  EISDIR: ['is_directory', 'The path is a directory, not a file.'],
  EEXIST: ['exists', 'Something already exists at the path.'],
  ENOTEMPTY: ['exists', 'Something already exists at the path.'],
  ELOOP: ['invalid_path', 'The path is a symbolic link, which the store does not follow.'],
  ENAMETOOLONG: ['invalid_path', 'A name in the path is too long for the filesystem.'],
  ENOSPC: ['unavailable', 'The disk is full.'],
  EDQUOT: ['unavailable', 'The disk quota is exhausted.'],
  EACCES: ['unavailable', 'The filesystem denied access.'],
  EPERM: ['unavailable', 'The filesystem denied the operation.'],
  EROFS: ['unavailable', 'The filesystem is read-only.'],
  EMFILE: ['unavailable', 'Too many open files.'],
};

/**
 * Turns a Node filesystem error into a `StoreError` whose message never contains a host path
 * (Node's own messages do). The cause keeps only the errno code and syscall, for the same reason.
 */
export function toStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const code = errnoCode(error);
  const syscall =
    typeof error === 'object' && error !== null && 'syscall' in error
      ? String((error as { syscall: unknown }).syscall)
      : undefined;
  const known = code === undefined ? undefined : MESSAGES[code];
  const cause = { code, syscall };
  if (known !== undefined) return new StoreError(known[0], known[1], { cause });
  return new StoreError('unavailable', `The filesystem failed (${code ?? 'unknown error'}).`, {
    cause,
  });
}
