import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

export {
  checkoutFingerprint,
  createBareRemote,
  createUserRepo,
  git,
  writeFiles,
} from '@baton/test-support';

/** A temporary directory per test, removed afterwards. */
export function useTempDirs(): () => Promise<string> {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'baton-ws-'));
    dirs.push(dir);
    return dir;
  };
}
