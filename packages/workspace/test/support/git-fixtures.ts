import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import {
  type ProjectWorkspace,
  type ProjectWorkspaceOptions,
  createProjectWorkspace,
  resolveProjectSource,
  workspaceGitPaths,
} from '../../src/index.js';

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

/**
 * Project `p`'s workspace of the user repository `repo`, laid out under `<root>/home` as a
 * worker lays it out (not prepared yet).
 */
export async function repoWorkspace(
  root: string,
  repo: string,
  options: Partial<
    Pick<ProjectWorkspaceOptions, 'skipHooks' | 'hookSandbox' | 'maxFileBytes'>
  > = {},
): Promise<ProjectWorkspace> {
  const source = await resolveProjectSource({ repo, projectId: 'p' });
  const home = path.join(root, 'home');
  return createProjectWorkspace({
    projectId: 'p',
    dir: path.join(home, 'workspaces', 'p'),
    gitDir: workspaceGitPaths(home, 'p').gitDir,
    remote: source.repo,
    baseCommit: source.baseCommit,
    ...options,
  });
}
