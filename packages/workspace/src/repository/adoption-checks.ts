import { lstat, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError } from '../errors.js';

/**
 * True when this machine has no clone of the project yet and `dir` already holds files Baton
 * did not put there (read before anything is written in it). A `.git` file naming another
 * git directory (a user's linked worktree) is refused: Baton would overwrite it. A checkout of
 * its own (`.git` directory) is refused by `CloneSetup`; in a clone made here, whatever is
 * in `dir` is the project's.
 */
export async function holdsForeignFiles(dir: string, gitDir: string): Promise<boolean> {
  if ((await stat(path.join(gitDir, 'HEAD')).catch(() => null)) !== null) return false;
  const entries = await readdir(dir).catch(() => []);
  if (entries.length === 0) return false;
  const dotGitPath = path.join(dir, '.git');
  const dotGit = await lstat(dotGitPath).catch(() => null);
  if (dotGit?.isDirectory() === true) return false;
  if (dotGit === null) return true;
  const link = await readFile(dotGitPath, 'utf8').catch(() => '');
  if (link.trim() === `gitdir: ${gitDir}`) return false;
  throw new WorkspaceError(
    'workspace_taken',
    `the workspace ${dir} is a git checkout of its own (its .git names another repository); give it as --repo instead (Baton never writes a checkout it did not make).`,
  );
}

/** Foreign files in a project not created with `--adopt`: refused before anything is written. */
export function notAdopted(dir: string): WorkspaceError {
  return new WorkspaceError(
    'workspace_not_empty',
    `the workspace ${dir} already holds files Baton did not create, and the project was not created with --adopt; nothing in it was changed. Empty it, or create the project with --adopt to make them its first checkpoint.`,
  );
}

/**
 * The adopted directory became the first checkpoint elsewhere (another machine, or a clone
 * since lost): these files are not what the user adopted, and a checkout would overwrite them.
 */
export function adoptedElsewhere(dir: string): WorkspaceError {
  return new WorkspaceError(
    'workspace_not_empty',
    `the workspace ${dir} on this machine holds files Baton did not create, and the project already adopted its workspace at its first checkpoint; nothing in it was changed. Empty or move the directory, then resume the project.`,
  );
}

/** An adopted directory's files that the base commit also has: a checkout would overwrite them. */
export function clashesWithBase(dir: string, start: string, gitStderr: string): WorkspaceError {
  const clashing = gitStderr
    .split('\n')
    .filter((line) => /^\t/.test(line))
    .map((line) => line.trim());
  return new WorkspaceError(
    'workspace_not_empty',
    `the workspace ${dir} holds files the base commit ${start.slice(0, 12)} also has${clashing.length === 0 ? '' : ` (${clashing.slice(0, 8).join(', ')}${clashing.length > 8 ? ` and ${clashing.length - 8} more` : ''})`}; adopting it would overwrite them, so nothing in it was changed. Move them out, or start the project without --repo.`,
  );
}
