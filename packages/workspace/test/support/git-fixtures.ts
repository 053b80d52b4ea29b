import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createUserRepo } from '@baton/test-support';
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
 * Project `p`'s workspace of the user repository `repo`, laid out under `<root>/<home>` as a
 * worker lays it out (not prepared yet).
 */
export async function repoWorkspace(
  root: string,
  repo: string,
  options: Partial<
    Pick<ProjectWorkspaceOptions, 'skipHooks' | 'hookSandbox' | 'maxFileBytes' | 'fence'>
  > = {},
  home = 'home',
): Promise<ProjectWorkspace> {
  const source = await resolveProjectSource({ repo, projectId: 'p' });
  const batonHome = path.join(root, home);
  return createProjectWorkspace({
    projectId: 'p',
    dir: path.join(batonHome, 'workspaces', 'p'),
    gitDir: workspaceGitPaths(batonHome, 'p').gitDir,
    remote: source.repo,
    baseCommit: source.baseCommit,
    ...options,
  });
}

/**
 * A user repository under `root` and project `p`'s workspace on it (Baton's home in
 * `root/baton`), prepared at the base commit.
 */
export async function preparedProjectWorkspace(
  root: string,
): Promise<{ repo: string; workspace: ProjectWorkspace }> {
  const repo = await createUserRepo(root);
  const workspace = await repoWorkspace(root, repo, {}, 'baton');
  await workspace.prepare(null);
  return { repo, workspace };
}
