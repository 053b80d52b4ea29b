import { lstat, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WorkspaceError } from '../errors.js';
import { isForeignNonEmptyDirectory } from './adoption.js';
import { gitMessage, redactUrlCredentials, runGit } from './git.js';
import { memorySnapshotRef } from './memory-snapshot-format.js';
import { BATON_PROJECT_TRAILER, readTrailer } from './trailers.js';

/** Options of `checkWorkspaceDir`. */
export interface CheckWorkspaceDirOptions {
  /**
   * The user said the directory's files may become the project's first checkpoint
   * (`--adopt`, `adoptWorkspace`). Default false: a non-empty directory is refused.
   */
  adopt?: boolean | undefined;
}

/**
 * `--workspace DIR` must be a directory Baton may make its own: not a file, not a git checkout of
 * its own (Baton never writes a checkout it did not make), and not a directory holding files of
 * somebody else's unless `adopt` says so. A directory that does not exist here (it may exist only
 * on the workers), an empty one, or one Baton made (its `.git` is a file) passes.
 */
export async function checkWorkspaceDir(
  dir: string,
  options: CheckWorkspaceDirOptions = {},
): Promise<void> {
  const info = await stat(dir).catch(() => null);
  if (info !== null && !info.isDirectory()) {
    throw new WorkspaceError('workspace_taken', `--workspace ${dir} is not a directory.`);
  }
  const dotGit = await lstat(path.join(dir, '.git')).catch(() => null);
  if (dotGit?.isDirectory() === true) {
    throw new WorkspaceError(
      'workspace_taken',
      `--workspace ${dir} is a git repository; give it as --repo ${dir} (Baton never writes your checkout).`,
    );
  }
  if (options.adopt !== true && (await isForeignNonEmptyDirectory(dir))) {
    throw new WorkspaceError(
      'workspace_not_empty',
      `--workspace ${dir} already holds files Baton did not create; add --adopt to make them the project's first checkpoint (secrets and files over the size limit stay uncommitted, nothing is deleted).`,
    );
  }
}

/** The branch Baton works on for a project. */
export function projectBranch(projectId: string): string {
  return `baton/${projectId}`;
}

/** A project's repository and base, resolved and checked when the project is created. */
export interface ProjectSource {
  /** The repository: an absolute path for a local repository, else the URL as given. */
  repo: string;
  /** The base branch (the repository's current or default branch when none was given). */
  base: string;
  /** The commit the base branch pointed at: `baton/<project-id>` starts there. */
  baseCommit: string;
  /** `baton/<project-id>`. */
  branch: string;
  /**
   * The tip of `baton/<project-id>` when the branch already exists and was made by Baton for
   * this project (a project re-created with the same id continues from it); else `null`.
   */
  existingHead: string | null;
}

/** Options of `resolveProjectSource`. */
export interface ResolveProjectSourceOptions {
  /** `--repo`: a local path or a git URL. */
  repo: string;
  /** `--base`: a branch name. Default: the repository's current branch (path) or default branch (URL). */
  base?: string | undefined;
  projectId: string;
  /** Relative paths are resolved against this directory. Default `process.cwd()`. */
  cwd?: string | undefined;
  /** Longest wait for the repository to answer (ms). Default 60_000. */
  timeoutMs?: number | undefined;
}

/** True when `repo` is a URL git understands (`scheme://...` or scp-like `host:path`). */
export function isRemoteUrl(repo: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repo)) return !repo.toLowerCase().startsWith('file://');
  // scp-like syntax: a colon before the first slash (and not a Windows drive letter).
  const colon = repo.indexOf(':');
  const slash = repo.indexOf('/');
  return colon > 1 && (slash === -1 || colon < slash);
}

/** Checks the shape of `--repo` and makes a local path absolute. */
export function normalizeRepo(repo: string, cwd: string = process.cwd()): string {
  const trimmed = repo.trim();
  if (trimmed === '') throw new WorkspaceError('invalid_repo', '--repo is empty.');
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw new WorkspaceError('invalid_repo', '--repo contains control characters.');
  }
  if (trimmed.startsWith('-')) {
    throw new WorkspaceError('invalid_repo', `--repo ${trimmed} looks like an option.`);
  }
  if (/^ext::/i.test(trimmed) || /^[a-z][a-z0-9+.-]*::/i.test(trimmed)) {
    throw new WorkspaceError(
      'invalid_repo',
      '--repo must be a path or a URL, not a remote helper.',
    );
  }
  // https://user@host puts a token in the user name; ssh://git@host is only a login name.
  const userinfo = /^([a-z][a-z0-9+.-]*):\/\/([^/\s@]+)@/i.exec(trimmed);
  if (
    userinfo !== null &&
    (/^https?$/i.test(userinfo[1] ?? '') || (userinfo[2] ?? '').includes(':'))
  ) {
    throw new WorkspaceError(
      'invalid_repo',
      `--repo ${redactUrlCredentials(trimmed)} has credentials in it; Baton takes credentials only from the worker's git configuration (credential helper, SSH agent).`,
    );
  }
  if (isRemoteUrl(trimmed)) return trimmed;
  if (trimmed.toLowerCase().startsWith('file://')) return trimmed;
  return path.resolve(cwd, trimmed);
}

/** Checks the shape of `--base`. */
export async function checkBranchName(name: string, what = '--base'): Promise<void> {
  if (name.startsWith('-') || name.startsWith('refs/')) {
    throw new WorkspaceError('invalid_base', `${what} ${name} is not a branch name.`);
  }
  const checked = await runGit(['check-ref-format', `refs/heads/${name}`]);
  if (checked.code !== 0) {
    throw new WorkspaceError('invalid_base', `${what} ${name} is not a valid branch name.`);
  }
}

interface RemoteRefs {
  /** The branch HEAD points at, if the repository says. */
  head: string | null;
  refs: Map<string, string>;
}

/** `git ls-remote` of a repository: its HEAD branch and the requested refs. Never writes anything. */
async function listRemote(
  repo: string,
  patterns: readonly string[],
  timeoutMs: number,
): Promise<RemoteRefs> {
  const listed = await runGit(['ls-remote', '--symref', '--', repo, 'HEAD', ...patterns], {
    timeoutMs,
  });
  if (listed.code !== 0) {
    throw new WorkspaceError(
      'repo_unreachable',
      `cannot read the repository ${redactUrlCredentials(repo)}: ${gitMessage(listed)}`,
    );
  }
  const refs = new Map<string, string>();
  let head: string | null = null;
  for (const line of listed.stdout.split('\n')) {
    const symref = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
    if (symref?.[1] !== undefined) {
      head = symref[1];
      continue;
    }
    const [sha, name] = line.split('\t');
    if (sha !== undefined && name !== undefined && /^[0-9a-f]{40,64}$/.test(sha)) {
      refs.set(name, sha);
    }
  }
  return { head, refs };
}

/**
 * The message of `ref`'s tip in `repo`, read through a throw-away bare repository (so a URL
 * works the same as a path, and nothing is written in the user's repository).
 */
async function tipMessage(repo: string, ref: string, timeoutMs: number): Promise<string> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'baton-tip-'));
  try {
    const init = await runGit(['init', '-q', '--bare', scratch]);
    if (init.code !== 0) throw new WorkspaceError('git', `git init failed: ${gitMessage(init)}`);
    const fetched = await runGit(
      ['fetch', '-q', '--no-tags', '--depth=1', '--', repo, `${ref}:refs/baton/tip`],
      { gitDir: scratch, timeoutMs },
    );
    if (fetched.code !== 0) {
      throw new WorkspaceError(
        'repo_unreachable',
        `cannot fetch ${ref} from ${redactUrlCredentials(repo)}: ${gitMessage(fetched)}`,
      );
    }
    const shown = await runGit(['log', '-1', '--format=%B', 'refs/baton/tip'], {
      gitDir: scratch,
    });
    return shown.stdout;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** A branch `baton/<name>` of a repository: the code of the project `<name>`, if Baton made it. */
export interface ProjectBranch {
  /** What follows `baton/` (a project id if Baton made the branch). */
  projectId: string;
  /** `baton/<projectId>`. */
  branch: string;
  /** The commit the branch points at. */
  head: string;
  /** The project's latest memory snapshot (`refs/baton/memory/<projectId>`), or `null`: none. */
  memorySnapshot: string | null;
}

/**
 * The `baton/<name>` branches of a repository (a path or URL), by name: what projects Redis lost
 * leave behind. Reads only (one `git ls-remote`); who made each branch is checked when one is
 * adopted (`resolveProjectSource` reads its tip's `Baton-Project` trailer).
 */
export async function listProjectBranches(options: {
  repo: string;
  cwd?: string | undefined;
  timeoutMs?: number | undefined;
}): Promise<ProjectBranch[]> {
  const repo = normalizeRepo(options.repo, options.cwd);
  if (!isRemoteUrl(repo) && !repo.toLowerCase().startsWith('file://')) {
    const info = await stat(repo).catch(() => null);
    if (info === null || !info.isDirectory()) {
      throw new WorkspaceError('repo_unreachable', `${repo}: no such directory.`);
    }
  }
  const listed = await listRemote(
    repo,
    [`refs/heads/${projectBranch('*')}`, memorySnapshotRef('*')],
    options.timeoutMs ?? 60_000,
  );
  const branches: ProjectBranch[] = [];
  for (const [name, head] of listed.refs) {
    const projectId = /^refs\/heads\/baton\/([^/]+)$/u.exec(name)?.[1];
    if (projectId === undefined) continue;
    const memorySnapshot = listed.refs.get(memorySnapshotRef(projectId)) ?? null;
    branches.push({ projectId, branch: projectBranch(projectId), head, memorySnapshot });
  }
  return branches.sort((left, right) => left.projectId.localeCompare(right.projectId));
}

/**
 * Resolves `--repo` and `--base` for a new project and checks that Baton may use its branch:
 * the repository answers, the base exists (resolved to a commit), and `baton/<project-id>` is
 * either absent or Baton's own for this project. Reads only; throws `WorkspaceError` with a
 * one-line message otherwise.
 */
export async function resolveProjectSource(
  options: ResolveProjectSourceOptions,
): Promise<ProjectSource> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const repo = normalizeRepo(options.repo, options.cwd);
  if (!isRemoteUrl(repo) && !repo.toLowerCase().startsWith('file://')) {
    const info = await stat(repo).catch(() => null);
    if (info === null || !info.isDirectory()) {
      throw new WorkspaceError('repo_unreachable', `--repo ${repo}: no such directory.`);
    }
  }
  if (options.base !== undefined) await checkBranchName(options.base);
  const branch = projectBranch(options.projectId);
  const listed = await listRemote(
    repo,
    [...(options.base === undefined ? [] : [`refs/heads/${options.base}`]), `refs/heads/${branch}`],
    timeoutMs,
  );
  const base = options.base ?? listed.head;
  if (base === null) {
    throw new WorkspaceError(
      'base_not_found',
      `${redactUrlCredentials(repo)} has no current branch to start from (empty repository or detached HEAD); give --base BRANCH.`,
    );
  }
  if (base === branch) {
    throw new WorkspaceError(
      'invalid_base',
      `--base ${base} is the project's own branch; give the branch the work starts from.`,
    );
  }
  const baseCommit =
    listed.refs.get(`refs/heads/${base}`) ??
    (options.base === undefined ? (listed.refs.get('HEAD') ?? undefined) : undefined);
  if (baseCommit === undefined) {
    throw new WorkspaceError(
      'base_not_found',
      `${redactUrlCredentials(repo)} has no branch ${base}${options.base === undefined ? '' : ' (--base)'}.`,
    );
  }
  const existing = listed.refs.get(`refs/heads/${branch}`) ?? null;
  if (existing !== null) {
    const message = await tipMessage(repo, `refs/heads/${branch}`, timeoutMs);
    if (readTrailer(message, BATON_PROJECT_TRAILER) !== options.projectId) {
      throw new WorkspaceError(
        'branch_taken',
        `${redactUrlCredentials(repo)} already has a branch ${branch} that Baton did not make for this project; delete or rename it, or choose another project id.`,
      );
    }
  }
  return { repo, base, baseCommit, branch, existingHead: existing };
}
