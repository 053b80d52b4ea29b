import path from 'node:path';
import type { SandboxSetup } from '../sandbox/command-sandbox.js';
import { workspaceGitPaths } from './layout.js';
import {
  createProjectWorkspace,
  type ProjectWorkspace,
  type PushRetryOptions,
} from './project-workspace.js';

/** Options of `openProjectWorkspace`: a project's source fields and the worker's home. */
export interface OpenProjectWorkspaceOptions {
  /** The worker's (or `baton run`'s) `BATON_HOME`, absolute. */
  home: string;
  projectId: string;
  /** The project's `--repo`; `null`: a bare repository Baton owns under `home`. */
  repo: string | null;
  /** The commit the branch starts from; `null` for a project that starts from nothing. */
  baseCommit: string | null;
  /** `--skip-hooks`. Default false. */
  skipHooks?: boolean | undefined;
  /** The working tree. Default `<home>/workspaces/<project-id>`. */
  dir?: string | undefined;
  push?: PushRetryOptions | undefined;
  /** Where commit hooks run: the session's sandbox setup. Default: the default sandbox. */
  hookSandbox?: SandboxSetup | undefined;
  /** Files larger than this are left out of checkpoints. Default 52_428_800 (50 MiB). */
  maxFileBytes?: number | undefined;
  /** Asked before every push; a reason refuses it (`ProjectWorkspaceOptions.mayPush`). */
  mayPush?: (() => Promise<string | undefined>) | undefined;
  /** The session's lease fencing token (`ProjectWorkspaceOptions.fence`). Default: none. */
  fence?: number | undefined;
  /** The project was created with `--adopt` (`ProjectWorkspaceOptions.adopt`). Default false. */
  adopt?: boolean | undefined;
}

/** The project's clone on this machine, laid out under `home` the same way by every entry point. */
export function openProjectWorkspace(options: OpenProjectWorkspaceOptions): ProjectWorkspace {
  const paths = workspaceGitPaths(options.home, options.projectId);
  return createProjectWorkspace({
    projectId: options.projectId,
    dir: options.dir ?? path.join(options.home, 'workspaces', options.projectId),
    gitDir: paths.gitDir,
    remote: options.repo ?? paths.localRemote,
    createRemote: options.repo === null,
    baseCommit: options.baseCommit,
    skipHooks: options.skipHooks,
    push: options.push,
    hookSandbox: options.hookSandbox,
    maxFileBytes: options.maxFileBytes,
    mayPush: options.mayPush,
    fence: options.fence,
    adopt: options.adopt,
  });
}
