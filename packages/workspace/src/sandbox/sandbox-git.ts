import { copyFile, cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runGit } from '../repository/git.js';
import { SANDBOX_GIT_DIR, type SandboxGit } from './bubblewrap.js';

/**
 * Settings of Baton's git configuration git needs to read the repository correctly (format,
 * object and ref formats, file modes). Everything else stays on the host: the remote's URL,
 * `core.hooksPath` (host paths under `BATON_HOME`), and anything a filter or hook could run.
 */
const KEPT_SETTINGS =
  '^(core\\.(repositoryformatversion|filemode|symlinks|ignorecase|precomposeunicode)|extensions\\..+)$';

function quoted(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;
}

/**
 * Writes, under `into` (the session's private directory, out of the commands' reach), what the
 * sandbox needs to show `gitDir` read-only at `SANDBOX_GIT_DIR`: its configuration without host
 * paths, and the `.git` file the workspace shows inside.
 */
export async function prepareSandboxGit(gitDir: string, into: string): Promise<SandboxGit> {
  const read = await runGit([
    'config',
    '--file',
    path.join(gitDir, 'config'),
    '--get-regexp',
    KEPT_SETTINGS,
  ]);
  // Exit 1: none of the settings is there (git's defaults then apply inside as outside).
  if (read.code !== 0 && read.code !== 1) {
    throw new Error(`cannot read the workspace's git configuration (exit ${read.code})`);
  }
  const sections = new Map<string, string[]>([['core', ['\tbare = false']]]);
  for (const line of read.stdout.split('\n')) {
    const match = line.match(/^([a-z]+)\.([A-Za-z0-9-]+) ?(.*)$/);
    if (match === null) continue;
    const [, section = '', name = '', value = ''] = match;
    if (section === 'core' && name === 'bare') continue;
    const lines = sections.get(section) ?? [];
    lines.push(`\t${name} = ${quoted(value)}`);
    sections.set(section, lines);
  }
  const config = path.join(into, 'git-config');
  const dotGit = path.join(into, 'dot-git');
  await writeFile(
    config,
    [...sections].map(([section, lines]) => `[${section}]\n${lines.join('\n')}\n`).join(''),
  );
  await writeFile(dotGit, `gitdir: ${SANDBOX_GIT_DIR}\n`);
  return { directory: gitDir, config, dotGit };
}

/**
 * A scratch git directory for a checkpoint's hooks, under `into`: copies of Baton's `HEAD`,
 * refs, index and `info/` (cheap: no objects), its objects reached read-only through
 * `objects/info/alternates` = `objects` (the path hooks see them at), and the configuration
 * without host paths. Hooks may write anything in it (`git add`, a stash, lint-staged's backup)
 * and it is thrown away after them: Baton's own git directory is never written by a hook, and
 * Baton never reads back what one wrote there.
 */
export async function prepareHookGit(
  gitDir: string,
  into: string,
  objects: string,
): Promise<SandboxGit> {
  const prepared = await prepareSandboxGit(gitDir, into);
  const directory = path.join(into, 'git');
  await mkdir(path.join(directory, 'objects', 'info'), { recursive: true });
  await mkdir(path.join(directory, 'refs'), { recursive: true });
  await copyFile(path.join(gitDir, 'HEAD'), path.join(directory, 'HEAD'));
  const optional = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  };
  await Promise.all([
    cp(path.join(gitDir, 'refs'), path.join(directory, 'refs'), { recursive: true }).catch(
      optional,
    ),
    cp(path.join(gitDir, 'info'), path.join(directory, 'info'), { recursive: true }).catch(
      optional,
    ),
    copyFile(path.join(gitDir, 'packed-refs'), path.join(directory, 'packed-refs')).catch(optional),
    copyFile(path.join(gitDir, 'index'), path.join(directory, 'index')).catch(optional),
    copyFile(prepared.config, path.join(directory, 'config')),
    writeFile(path.join(directory, 'objects', 'info', 'alternates'), `${objects}\n`),
  ]);
  return { ...prepared, directory, scratchObjects: path.join(gitDir, 'objects') };
}

/** What the model is told when git inside refused to change Baton's repository. */
export const READ_ONLY_GIT_NOTE =
  "[Baton: git in the workspace is read-only (status, diff, log, show and blame work). Baton commits and pushes your changes itself at checkpoints (after turns that change files, and at the end of the session): don't commit, stage, stash or switch branches.]";

/**
 * The note for a command whose git tried to write Baton's repository (every such write fails
 * on the read-only mount at `SANDBOX_GIT_DIR`), or `null`. Git names the path it could not
 * write, and that path is Baton's own, so this cannot match another repository's failure.
 */
export function readOnlyGitNote(output: string): string | null {
  return output.includes(`${SANDBOX_GIT_DIR}/`) && /Read-only file system/.test(output)
    ? READ_ONLY_GIT_NOTE
    : null;
}
