/** Why a workspace operation failed. */
export type WorkspaceErrorCode =
  /** `--repo` is not a path or URL Baton accepts (credentials in it, an option-like value, ...). */
  | 'invalid_repo'
  /** The repository cannot be listed or fetched (missing, not a repository, unreachable). */
  | 'repo_unreachable'
  /** `--base` is not a valid branch name. */
  | 'invalid_base'
  /** The base branch (or the repository's default branch) does not exist. */
  | 'base_not_found'
  /** `baton/<project-id>` exists in the repository but was not made by Baton for this project. */
  | 'branch_taken'
  /** The project branch no longer contains the last checkpoint, or was deleted. */
  | 'branch_diverged'
  /** The remote refused the push as not a fast-forward (Baton never force-pushes). */
  | 'push_rejected'
  /** The push did not reach the remote (unreachable, refused by a server hook, ...). */
  | 'push_failed'
  /** The workspace directory is somebody else's (a git checkout of its own, a file, ...). */
  | 'workspace_taken'
  /** `--workspace` names a directory already holding files, and adopting them was not asked for. */
  | 'workspace_not_empty'
  /** A git command failed in a way none of the codes above describes. */
  | 'git'
  /** Commands cannot be sandboxed here (bubblewrap missing, no user namespaces, no cgroups). */
  | 'sandbox_unavailable'
  /** `BATON_SANDBOX` or a project's `sandbox` settings are not a valid policy. */
  | 'invalid_sandbox_policy'
  /** The workspace is over its size or file-count limit (`limits.workspaceMb`, `workspaceFiles`). */
  | 'workspace_full';

/**
 * The one error base of `@baton/workspace`. Messages name what was wrong in one line and never
 * contain credentials or stack traces.
 */
export class WorkspaceError extends Error {
  override readonly name = 'WorkspaceError';
  readonly code: WorkspaceErrorCode;

  constructor(code: WorkspaceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}
