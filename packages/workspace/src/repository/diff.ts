import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
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
  await createBareCache(cache);
  const tracking = `refs/baton/${branch}`;
  // Diffs of one project at once share the cache: a fetch waits for another's lock on the
  // tracking ref (git's default wait is 100 ms) and writes no FETCH_HEAD they would share.
  const fetched = await runGit(
    [
      '-c',
      `core.filesRefLockTimeout=${REF_LOCK_WAIT_MS}`,
      'fetch',
      '-q',
      '--no-tags',
      '--no-write-fetch-head',
      '--',
      options.remote,
      `+refs/heads/${branch}:${tracking}`,
    ],
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

/** How long a fetch waits for another fetch's lock on the tracking ref (ms). */
const REF_LOCK_WAIT_MS = 10_000;

/**
 * Creates the bare cache at `dir` unless it exists. Several diffs of one project can start at
 * once (the CLI in two terminals, dashboard requests) and two `git init` in one directory fail
 * on each other's files, so each initialises a directory of its own beside `dir` and renames it
 * into place; a rename that finds the cache already there lost to a concurrent one, which
 * created the same empty repository.
 */
async function createBareCache(dir: string): Promise<void> {
  if (await hasHead(dir)) return;
  const parent = path.dirname(dir);
  await mkdir(parent, { recursive: true });
  const fresh = await mkdtemp(path.join(parent, `.${path.basename(dir)}.new-`));
  try {
    const init = await runGit(['init', '-q', '--bare', fresh]);
    if (init.code !== 0) throw new WorkspaceError('git', `git init failed: ${gitMessage(init)}`);
    // rename(2) replaces an empty directory (one left by an older Baton's mkdir) and refuses
    // a full one.
    await rename(fresh, dir).catch(async (error: unknown) => {
      if (await hasHead(dir)) return;
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOTEMPTY' || code === 'EEXIST'
          ? 'it holds files but no git repository; remove it'
          : (code ?? 'rename failed');
      throw new WorkspaceError('git', `cannot create the diff cache ${dir}: ${why}`, {
        cause: error,
      });
    });
  } finally {
    await rm(fresh, { recursive: true, force: true });
  }
}

async function hasHead(gitDir: string): Promise<boolean> {
  return (await stat(path.join(gitDir, 'HEAD')).catch(() => null)) !== null;
}

async function emptyTree(gitDir: string): Promise<string> {
  const output = await runGit(['hash-object', '-t', 'tree', '/dev/null'], { gitDir });
  return output.stdout.trim();
}
