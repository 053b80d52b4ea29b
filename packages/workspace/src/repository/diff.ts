import { mkdir, stat } from 'node:fs/promises';
import { WorkspaceError } from '../errors.js';
import { gitMessage, redactUrlCredentials, runGit } from './git.js';
import { projectBranch } from './source.js';

/** Options of `diffProjectBranch`. */
export interface DiffProjectBranchOptions {
  projectId: string;
  /** The project's remote (the `--repo`, or the Baton-owned bare repository). */
  remote: string;
  /** The commit the branch started from; `null`: diff against the empty tree. */
  baseCommit: string | null;
  /** A bare repository of the caller's own to fetch into (created when missing). */
  cacheDir: string;
  /** `git diff --stat` instead of the full patch. Default false. */
  stat?: boolean;
  /** Longest wait for the fetch (ms). Default 60_000. */
  timeoutMs?: number;
}

/** The project branch against its base, as the remote has it now. */
export interface ProjectBranchDiff {
  branch: string;
  /** The branch tip, or `null` when nothing was pushed yet (then `text` is empty). */
  head: string | null;
  /** The commits on the branch since the base, newest first: `sha subject`. */
  commits: Array<{ sha: string; subject: string }>;
  /** `git diff` (or `--stat`) output. */
  text: string;
}

/**
 * Fetches `baton/<project-id>` from the project's remote into `cacheDir` and diffs it against
 * the base commit. Reads the remote only; never touches a working tree.
 */
export async function diffProjectBranch(
  options: DiffProjectBranchOptions,
): Promise<ProjectBranchDiff> {
  const branch = projectBranch(options.projectId);
  const cache = options.cacheDir;
  if ((await stat(`${cache}/HEAD`).catch(() => null)) === null) {
    await mkdir(cache, { recursive: true });
    const init = await runGit(['init', '-q', '--bare', cache]);
    if (init.code !== 0) throw new WorkspaceError('git', `git init failed: ${gitMessage(init)}`);
  }
  const tracking = `refs/baton/${branch}`;
  const fetched = await runGit(
    ['fetch', '-q', '--no-tags', '--', options.remote, `+refs/heads/${branch}:${tracking}`],
    { gitDir: cache, timeoutMs: options.timeoutMs ?? 60_000 },
  );
  if (fetched.code !== 0) {
    if (/couldn't find remote ref/i.test(fetched.stderr)) {
      return { branch, head: null, commits: [], text: '' };
    }
    throw new WorkspaceError(
      'repo_unreachable',
      `cannot fetch ${branch} from ${redactUrlCredentials(options.remote)}: ${gitMessage(fetched)}`,
    );
  }
  const head = (await runGit(['rev-parse', tracking], { gitDir: cache })).stdout.trim();
  const base = options.baseCommit ?? (await emptyTree(cache));
  const range = options.baseCommit === null ? [tracking] : [`${options.baseCommit}..${tracking}`];
  const log = await runGit(['log', '--format=%H %s', ...range], { gitDir: cache });
  const diff = await runGit(
    ['diff', ...(options.stat === true ? ['--stat'] : []), base, tracking],
    { gitDir: cache },
  );
  if (diff.code !== 0) throw new WorkspaceError('git', `git diff failed: ${gitMessage(diff)}`);
  const commits = log.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ({
      sha: line.slice(0, line.indexOf(' ')),
      subject: line.slice(line.indexOf(' ') + 1),
    }));
  return { branch, head, commits, text: diff.stdout };
}

async function emptyTree(gitDir: string): Promise<string> {
  const output = await runGit(['hash-object', '-t', 'tree', '/dev/null'], { gitDir });
  return output.stdout.trim();
}
