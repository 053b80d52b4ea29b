import { StoreError } from '@baton/core';

/**
 * Numeric status codes returned by the Lua scripts (first element of every reply), and their
 * mapping to `StoreError`s. The same table is documented in `src/commands/includes/lib.lua`.
 */
export const ScriptStatus = {
  ok: 0,
  notFound: 1,
  exists: 2,
  isDirectory: 3,
  notADirectory: 4,
  intoItself: 5,
  quotaFileBytes: 6,
  quotaTotalBytes: 7,
  quotaFiles: 8,
  conflict: 9,
  invalidPath: 10,
  stageMissing: 11,
  fenced: 12,
} as const;

/**
 * Turns a non-zero script status into the `StoreError` a caller sees. `path` is a store path
 * (never a host path); `target` is the destination of a rename; `limit` the quota's value.
 */
export function statusError(
  status: number,
  path: string,
  target?: string,
  limit?: number,
): StoreError {
  const shown = path === '' ? 'the root' : path;
  // A quota reply carries the limit as its second element; anything else there is not a limit.
  const maximum = limit !== undefined && Number.isSafeInteger(limit) ? limit : undefined;
  switch (status) {
    case ScriptStatus.notFound:
      return new StoreError('not_found', `${shown} does not exist.`);
    case ScriptStatus.exists:
      return new StoreError('exists', `${target ?? shown} already exists.`);
    case ScriptStatus.isDirectory:
      return new StoreError('is_directory', `${shown} is a directory.`);
    case ScriptStatus.notADirectory:
      return new StoreError('not_a_directory', `A parent of ${target ?? shown} is a file.`);
    case ScriptStatus.intoItself:
      return new StoreError(
        'into_itself',
        `Cannot move ${shown} into its own subtree (${target ?? ''}).`,
      );
    case ScriptStatus.quotaFileBytes:
      return new StoreError(
        'quota_exceeded',
        `${shown} would exceed the maximum file size of ${limit} bytes.`,
        { limit: 'maxFileBytes', maximum },
      );
    case ScriptStatus.quotaTotalBytes:
      return new StoreError(
        'quota_exceeded',
        `Writing ${shown} would exceed the memory quota of ${limit} bytes.`,
        { limit: 'maxTotalBytes', maximum },
      );
    case ScriptStatus.quotaFiles:
      return new StoreError(
        'quota_exceeded',
        `Creating ${shown} would exceed the limit of ${limit} files.`,
        { limit: 'maxFiles', maximum },
      );
    case ScriptStatus.conflict:
      return new StoreError(
        'conflict',
        `${shown} kept changing while it was being edited; try again.`,
      );
    case ScriptStatus.invalidPath:
      return new StoreError('invalid_path', `${shown} is not a valid path for this operation.`);
    case ScriptStatus.stageMissing:
      return new StoreError(
        'unavailable',
        `The content for ${shown} did not reach Redis in time; nothing was written. Try again.`,
      );
    case ScriptStatus.fenced:
      // 'unavailable': for this session the store is gone; the session is stopped by `onFenced`.
      return new StoreError(
        'unavailable',
        'This session no longer holds the project (a newer session replaced it); nothing was written.',
      );
    default:
      return new StoreError(
        'unavailable',
        `Redis returned an unknown status ${status} for ${shown}.`,
      );
  }
}

const UNAVAILABLE_REPLIES = [
  'LOADING',
  'READONLY',
  'MASTERDOWN',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'OOM',
  'BUSY',
  'NOREPLICAS',
];

/**
 * Wraps anything ioredis throws (closed connection, retries exhausted, offline queue off,
 * timeouts, server-side refusals) into `StoreError('unavailable')`, keeping it as `cause`; a
 * WRONGTYPE reply (a key of the namespace changed outside the store) is `corrupt` instead.
 * `StoreError`s pass through unchanged.
 *
 * Reply codes are matched as a word anywhere in the message, not at its start: before Redis 7 an
 * error raised by `redis.call` inside a script (every write of the store) arrives wrapped, as
 * `ERR Error running script (call to f_<sha>): @user_script:1: WRONGTYPE Operation ...`; Redis 7
 * sends it as is, followed by ` script: <sha>, on @user_script:1.`.
 */
export function toStoreError(error: unknown, action: string): StoreError {
  if (error instanceof StoreError) {
    return error;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (hasReplyCode(message, 'WRONGTYPE')) {
    // A key of the namespace holds another type than the scripts write (changed outside the
    // store): damage, not an outage. The key is not named: the message may reach the model.
    return new StoreError(
      'corrupt',
      `A Redis key of this memory store holds the wrong type of value (WRONGTYPE) while trying to ${action}: its data was changed outside the store; nothing was written, and retrying will not help until the key is repaired or deleted.`,
      { cause: error },
    );
  }
  const reply = UNAVAILABLE_REPLIES.find((code) => hasReplyCode(message, code));
  const reason =
    reply === undefined ? 'Redis is unavailable' : `Redis refused the command (${reply})`;
  return new StoreError('unavailable', `${reason} while trying to ${action}; try again later.`, {
    cause: error,
  });
}

/** Whether `message` carries the Redis reply code `code` (upper-case letters) as a whole word. */
function hasReplyCode(message: string, code: string): boolean {
  return new RegExp(`\\b${code}\\b`).test(message);
}
