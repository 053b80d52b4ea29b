import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { ensureSecretExcludes, looksLikeSecretFile } from '@baton/workspace';

/** The git commit made at the end of a session. */
export interface SessionCommit {
  /** Commit id, or `null` when there was nothing to commit. */
  sha: string | null;
  message: string;
  /** Files left out because they look like secrets (`.env`, `*.pem`, key files, files containing keys). */
  skipped: string[];
}

function git(
  cwd: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      { cwd, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** True if `workspace` is the top level of its own git repository (never a parent repository's subfolder). */
export async function isGitWorkspace(workspace: string): Promise<boolean> {
  const top = await git(workspace, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) return false;
  const [left, right] = await Promise.all([
    realpath(top.stdout.trim()).catch(() => ''),
    realpath(workspace).catch(() => workspace),
  ]);
  return left === right;
}

async function ensureExcludes(workspace: string): Promise<void> {
  const location = await git(workspace, ['rev-parse', '--absolute-git-dir']);
  if (location.code === 0) await ensureSecretExcludes(location.stdout.trim());
}

/**
 * Commit everything in the workspace with `message`, except files that look like secrets (they
 * are unstaged and listed in `skipped`). Returns `undefined` when the workspace is not the top of
 * a git repository. Uses the repository's identity, or "Baton <baton@localhost>" if none is set.
 */
export async function commitWorkspace(
  workspace: string,
  message: string,
): Promise<SessionCommit | undefined> {
  if (!(await isGitWorkspace(workspace))) return undefined;
  await ensureExcludes(workspace);
  const added = await git(workspace, ['add', '-A']);
  if (added.code !== 0) throw new Error(`git add failed: ${added.stderr.trim()}`);
  const staged = (await git(workspace, ['diff', '--cached', '--name-only', '-z'])).stdout
    .split('\0')
    .filter(Boolean);
  const hasHead = (await git(workspace, ['rev-parse', '--verify', '-q', 'HEAD'])).code === 0;
  const skipped: string[] = [];
  for (const file of staged) {
    if (await looksLikeSecretFile(workspace, file)) skipped.push(file);
  }
  if (skipped.length > 0) {
    const unstage = hasHead
      ? ['reset', '-q', '--', ...skipped]
      : ['rm', '--cached', '-q', '--', ...skipped];
    const result = await git(workspace, unstage);
    if (result.code !== 0)
      throw new Error(`git could not unstage secret files: ${result.stderr.trim()}`);
  }
  if (staged.length === skipped.length) return { sha: null, message, skipped };
  const identity =
    (await git(workspace, ['config', '--get', 'user.email'])).code === 0
      ? []
      : ['-c', 'user.name=Baton', '-c', 'user.email=baton@localhost'];
  const committed = await git(workspace, [
    ...identity,
    'commit',
    '-q',
    '--no-verify',
    '-m',
    message,
  ]);
  if (committed.code !== 0) throw new Error(`git commit failed: ${committed.stderr.trim()}`);
  const sha = (await git(workspace, ['rev-parse', 'HEAD'])).stdout.trim();
  return { sha, message, skipped };
}
