import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { WorkspaceError } from '../errors.js';
import { gitMessage, runGit } from './git.js';
import { looksLikeSecretFile } from './secret-files.js';
import { DEFAULT_MAX_FILE_BYTES } from './file-limits.js';
import { listWorktreeFiles, type SpecialFileKind } from './worktree-files.js';

/**
 * What adopting a directory as a project's workspace (`--workspace DIR --adopt`) will do with the
 * files already there, worked out the way a checkpoint stages them (`listWorktreeFiles`, the
 * secret filter, the per-file size limit) without writing anything. Nothing is ever deleted:
 * every file stays in the directory; the lists say which ones the first checkpoint commits.
 */
export interface AdoptionPreview {
  /** The directory, absolute. */
  dir: string;
  /** Files the first checkpoint commits and pushes to the project branch. */
  committed: string[];
  /** Files kept in the directory and never committed because they look like secrets. */
  secrets: string[];
  /** Files kept and never committed because they are larger than the per-file limit. */
  tooLarge: Array<{ path: string; bytes: number }>;
  /** Paths (files or whole directories) kept and never committed: `.gitignore` rules exclude them. */
  ignored: string[];
  /** FIFOs, sockets and devices: kept, git cannot store them. */
  special: Array<{ path: string; kind: SpecialFileKind }>;
  /** The per-file limit the preview applied (bytes). */
  maxFileBytes: number;
}

/** Options of `previewAdoption`. */
export interface PreviewAdoptionOptions {
  /** Files larger than this are left out. Default 52_428_800 (50 MiB), as checkpoints. */
  maxFileBytes?: number | undefined;
}

/**
 * True when `dir` holds files Baton did not put there: it exists, is a directory, has entries,
 * and no `.git` file linking it to a Baton git directory (Baton's own workspaces have one).
 */
export async function isForeignNonEmptyDirectory(dir: string): Promise<boolean> {
  const entries = await readdir(dir).catch(() => null);
  if (entries === null || entries.length === 0) return false;
  const dotGit = await lstat(path.join(dir, '.git')).catch(() => null);
  return dotGit?.isFile() !== true;
}

/** What adopting `dir` would commit, keep and leave out; reads only. */
export async function previewAdoption(
  dir: string,
  options: PreviewAdoptionOptions = {},
): Promise<AdoptionPreview> {
  const root = path.resolve(dir);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  // git answers ignore rules from a scratch repository: nothing is written in `dir`.
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'baton-adopt-'));
  try {
    const init = await runGit(['init', '-q', '--bare', scratch]);
    if (init.code !== 0) throw new WorkspaceError('git', `git init failed: ${gitMessage(init)}`);
    const ignored: string[] = [];
    const special: AdoptionPreview['special'] = [];
    const files = await listWorktreeFiles({
      dir: root,
      ignored: async (paths) => {
        if (paths.length === 0) return new Set();
        const output = await runGit(['check-ignore', '-z', '--stdin'], {
          gitDir: scratch,
          workTree: root,
          cwd: root,
          input: `${paths.join('\0')}\0`,
        });
        if (output.code !== 0 && output.code !== 1) {
          throw new WorkspaceError('git', `git check-ignore failed: ${gitMessage(output)}`);
        }
        const found = output.stdout.split('\0').filter(Boolean);
        ignored.push(...found);
        return new Set(found);
      },
      onSpecialFile: (file, kind) => special.push({ path: file, kind }),
    });
    const preview: AdoptionPreview = {
      dir: root,
      committed: [],
      secrets: [],
      tooLarge: [],
      ignored: ignored.sort(),
      special,
      maxFileBytes,
    };
    for (const file of files) {
      const info = await lstat(path.join(root, file)).catch(() => null);
      const bytes = info?.isFile() === true ? info.size : 0;
      if (bytes > maxFileBytes) preview.tooLarge.push({ path: file, bytes });
      else if (await looksLikeSecretFile(root, file)) preview.secrets.push(file);
      else preview.committed.push(file);
      await yieldToEventLoop();
    }
    return preview;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
