import { randomBytes } from 'node:crypto';
import {
  closeSync,
  linkSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { StoreError } from '../../store.js';
import { errnoCode } from './fs-errors.js';

/**
 * Identifies this process incarnation. A pid alone is not enough: a restarted container often
 * reuses the pid of the process that crashed holding a lock.
 */
export const PROCESS_TOKEN = `${process.pid}-${randomBytes(6).toString('hex')}`;

/** Options of `acquireFileLock`. */
export interface FileLockOptions {
  /** Give up after this long, with `StoreError('conflict')`. */
  timeoutMs: number;
  /** A lock whose owner cannot be identified (empty or foreign content) is stale after this long. */
  staleMs: number;
  /**
   * This process's owner file, on the lock's filesystem, holding `PROCESS_TOKEN` (created when
   * missing). Taking the lock hard-links it to the lock path; releasing unlinks that name.
   */
  ownerPath: string;
}

/** Releases a lock taken by `acquireFileLock`. */
export type ReleaseLock = () => Promise<void>;

/** True if the owner named by a token (`pid-nonce`) is certainly gone. */
export function isOwnerGone(token: string): boolean {
  const match = /^(\d+)-([0-9a-f]+)$/.exec(token);
  if (match === null) return false;
  const pid = Number(match[1]);
  // Same pid, other nonce: an earlier incarnation of a pid this process now has.
  if (pid === process.pid) return token !== PROCESS_TOKEN;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return errnoCode(error) === 'ESRCH';
  }
}

/**
 * A cross-process lock: the lock path is a hard link to the owner's file (`ownerPath`, content:
 * the owner's token). `link()` fails if the name exists, so one process wins, and reading the
 * lock reads the owner's token. A link only adds a name to an existing inode: creating and
 * unlinking a fresh lock file instead allocated and freed an inode on every mutation, which made
 * the next `fsync` cost about 0.8 ms more on ext4 here (measured: docs/benchmarks/memory.md).
 * A lock file created by an older version (O_EXCL, token inside) is honoured the same way.
 *
 * Crash recovery: a lock whose owner process is gone (same host) is broken at once; a lock with
 * unreadable content is broken once older than `staleMs`. Breaking is itself serialised through
 * a second O_EXCL file (`<lock>.break`) and re-checks the content before unlinking, so two
 * processes recovering at once can never remove a lock a third one has just taken.
 */
export async function acquireFileLock(
  path: string,
  options: FileLockOptions,
): Promise<ReleaseLock> {
  const deadline = Date.now() + options.timeoutMs;
  let delayMs = 1;
  for (;;) {
    // Synchronous calls: each is a few microseconds on a local disk, far cheaper than a thread
    // pool round trip, and a write takes the lock on every call.
    if (tryLink(options.ownerPath, path)) {
      return () => {
        removeQuietly(path);
        return Promise.resolve();
      };
    }
    const breakable = staleContent(path, options.staleMs);
    if (breakable !== undefined && breakStaleLock(path, breakable)) continue;
    if (Date.now() >= deadline) {
      throw new StoreError(
        'conflict',
        'The store stayed locked by another process for too long; try again.',
      );
    }
    // Polling is the only portable way to wait for a lock file; back off to stay cheap.
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, 20);
  }
}

function tryLink(ownerPath: string, path: string): boolean {
  for (let attempt = 0; ; attempt++) {
    try {
      linkSync(ownerPath, path);
      return true;
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EEXIST') return false;
      // The owner file is created on first use (and again if someone removed it). If the
      // directory itself is gone, writing it throws ENOENT for the caller to handle.
      if (code !== 'ENOENT' || attempt > 0) throw error;
      writeFileSync(ownerPath, PROCESS_TOKEN, { mode: 0o600 });
    }
  }
}

function tryCreate(path: string): boolean {
  let descriptor;
  try {
    descriptor = openSync(path, 'wx', 0o600);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(descriptor, PROCESS_TOKEN);
  } finally {
    closeSync(descriptor);
  }
  return true;
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** The lock's content if it is stale, `undefined` if it is live or already gone. */
function staleContent(path: string, staleMs: number): string | undefined {
  let content: string;
  let modifiedAt: number;
  try {
    content = readFileSync(path, 'utf8');
    modifiedAt = statSync(path).mtimeMs;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  if (content !== '' && isOwnerGone(content)) return content;
  // Empty content: the owner may be between open() and write(); only age makes it stale.
  if (Date.now() - modifiedAt > staleMs && !(content !== '' && isOwnerKnownAlive(content))) {
    return content;
  }
  return undefined;
}

function isOwnerKnownAlive(token: string): boolean {
  return /^(\d+)-([0-9a-f]+)$/.test(token) && !isOwnerGone(token);
}

/** Removes the lock if it still holds `expected`. True if the caller should retry at once. */
function breakStaleLock(path: string, expected: string): boolean {
  const breakerPath = `${path}.break`;
  if (!tryCreate(breakerPath)) {
    // Another process is breaking it; a breaker that crashed is itself stale after 10 s.
    if (staleContent(breakerPath, 10_000) !== undefined) removeQuietly(breakerPath);
    return false;
  }
  try {
    let current: string | undefined;
    try {
      current = readFileSync(path, 'utf8');
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
    }
    if (current === expected) removeQuietly(path);
    return true;
  } finally {
    removeQuietly(breakerPath);
  }
}
