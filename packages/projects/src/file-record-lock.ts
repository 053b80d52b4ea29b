import { mkdir, rm, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * A lock held longer than this was left by a process that died holding it (a holder only reads
 * and renames one small file) and is taken over.
 */
const STALE_LOCK_MS = 10_000;

/**
 * Runs `body` (a read-modify-write of `file`) holding `<file>.lock`, a directory every process
 * creates the same way, so `baton run` and another process changing the same project
 * (`baton pause --local`) never write over each other's change. Waits, backing off up to 50 ms,
 * while another process holds it; without the file's directory, `body` runs unlocked (it then
 * finds no file).
 */
export async function withFileLock<T>(file: string, body: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  for (let waitMs = 1; ; waitMs = Math.min(waitMs * 2, 50)) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return body();
      if (code !== 'EEXIST') throw error;
      const heldMs = await stat(lock).then(
        (held) => Date.now() - held.mtimeMs,
        () => 0,
      );
      if (heldMs > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
      else await delay(waitMs);
    }
  }
  try {
    return await body();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
