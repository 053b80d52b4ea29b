import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createUserRepo } from '@baton/test-support';
import { afterEach } from 'vitest';
import {
  createProjectWorkspace,
  resolveProjectSource,
  workspaceGitPaths,
  type ProjectWorkspace,
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
 * A user repository under `root` and project `p`'s workspace on it (Baton's home in
 * `root/baton`), prepared at the base commit.
 */
export async function preparedProjectWorkspace(
  root: string,
): Promise<{ repo: string; workspace: ProjectWorkspace }> {
  const repo = await createUserRepo(root);
  const source = await resolveProjectSource({ repo, projectId: 'p' });
  const home = path.join(root, 'baton');
  const workspace = createProjectWorkspace({
    projectId: 'p',
    dir: path.join(home, 'workspaces', 'p'),
    gitDir: workspaceGitPaths(home, 'p').gitDir,
    remote: source.repo,
    baseCommit: source.baseCommit,
  });
  await workspace.prepare(null);
  return { repo, workspace };
}
