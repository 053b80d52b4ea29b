import {
  closeSync,
  constants,
  fchmodSync,
  fsync,
  linkSync,
  openSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';

/**
 * Writes `bytes` to `temp` (a fresh name on the target's filesystem), fsyncs it, then `link()`s
 * it to `target` for a create (fails if anything appeared there) or `rename()`s it over `target`
 * for a replace. The caller fsyncs the target's directory so the new entry survives a crash.
 */
export async function writeFileAtomically(
  temp: string,
  target: string,
  bytes: Buffer,
  mode: 'create' | 'replace',
): Promise<void> {
  try {
    const descriptor = openSync(temp, 'wx', 0o600);
    try {
      // The umask may have removed bits from 0600; the mode must not depend on the environment.
      fchmodSync(descriptor, 0o600);
      writeFileSync(descriptor, bytes);
      await fsyncAsync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    if (mode === 'create') {
      linkSync(temp, target);
      unlinkSync(temp);
    } else {
      renameSync(temp, target);
    }
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // Already gone, or never created.
    }
    throw error;
  }
}

/** fsync of a directory, so entries created, renamed or removed in it survive a crash. */
export async function syncDirectory(host: string): Promise<void> {
  const descriptor = openSync(host, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fsyncAsync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/** The only slow call of a write (milliseconds): it goes to the thread pool; everything else is sync. */
function fsyncAsync(descriptor: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fsync(descriptor, (error) => (error === null ? resolve() : reject(error)));
  });
}
