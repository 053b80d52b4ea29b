import { lstat, opendir } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/**
 * What a checkpoint may commit, found without letting git look at a repository below the
 * workspace root. `git add -A` treats a directory holding a `.git` (a nested `git init`, a clone,
 * a `.git` *file* whose `gitdir:` names a repository elsewhere on the host) as a repository of its
 * own: it records a gitlink to that repository's HEAD or fails for the whole workspace. Here the
 * working tree is walked by Baton, following no link and leaving out every entry named `.git` at
 * any depth; git only answers which paths its ignore rules exclude (`git check-ignore`, which reads
 * `.gitignore` files and never opens a repository), and the result goes to `git update-index`
 * on stdin.
 */

/** Answers which of `paths` (relative, `/`-separated) are ignored. */
type IgnoredPaths = (paths: readonly string[]) => Promise<ReadonlySet<string>>;

/** Options of `listWorktreeFiles`. */
export interface ListWorktreeFilesOptions {
  /** The working tree. */
  dir: string;
  /** Ignore rules (`git check-ignore --stdin`). */
  ignored: IgnoredPaths;
  /** Directories not walked (gitlinks of the base commit: real submodules stay as they are). */
  skipDirectories?: ReadonlySet<string> | undefined;
  /**
   * Told of every FIFO, socket and device found (not ignored): git cannot store them, so they are
   * left out and a checkpoint names them. Default: not told.
   */
  onSpecialFile?: ((file: string, kind: SpecialFileKind) => void) | undefined;
  /** Told of every regular file or link the ignore rules exclude. Default: not told. */
  onIgnoredFile?: ((file: string) => void) | undefined;
}

/**
 * What a file git cannot store is: never committed, named with this word where it is reported.
 * `refused-name`: a regular file whose path git refuses (`.Git/...`, `GIT~1`: names that would
 * be a git directory on some file system); the checkpoint finds those, not the walk.
 */
export type SpecialFileKind = 'fifo' | 'socket' | 'device' | 'refused-name';

/**
 * Every regular file and symbolic link of the working tree that is not ignored, relative and
 * sorted; directories named `.git`, `.git` files, FIFOs, sockets and devices are left out and
 * ignored directories are not entered.
 */
export async function listWorktreeFiles(options: ListWorktreeFilesOptions): Promise<string[]> {
  const files: string[] = [];
  let level: string[] = [''];
  while (level.length > 0) {
    const directories: string[] = [];
    const candidates: string[] = [];
    const special = new Map<string, SpecialFileKind>();
    for (const relative of level) {
      const reader = await opendir(path.join(options.dir, relative)).catch(() => null);
      if (reader === null) continue;
      for await (const entry of reader) {
        if (entry.name === '.git') continue;
        const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
        if (entry.isDirectory()) {
          if (options.skipDirectories?.has(child) !== true) directories.push(child);
        } else if (entry.isFile() || entry.isSymbolicLink()) {
          candidates.push(child);
        } else if (entry.isFIFO()) {
          special.set(child, 'fifo');
        } else if (entry.isSocket()) {
          special.set(child, 'socket');
        } else if (entry.isCharacterDevice() || entry.isBlockDevice()) {
          special.set(child, 'device');
        } else {
          // A file system that does not report types (DT_UNKNOWN): ask lstat.
          const info = await lstat(path.join(options.dir, child)).catch(() => null);
          if (info?.isDirectory() === true) directories.push(child);
          else if (info?.isFile() === true || info?.isSymbolicLink() === true)
            candidates.push(child);
        }
      }
      await yieldToEventLoop();
    }
    const ignored = await options.ignored([...directories, ...candidates, ...special.keys()]);
    for (const file of candidates) {
      if (!ignored.has(file)) files.push(file);
      else options.onIgnoredFile?.(file);
    }
    for (const [file, kind] of special) if (!ignored.has(file)) options.onSpecialFile?.(file, kind);
    level = directories.filter((directory) => !ignored.has(directory));
  }
  return files.sort();
}

/** True when no component of `file` is `.git` (git refuses such paths; Baton leaves them out). */
export function isCommittablePath(file: string): boolean {
  return !file.split('/').includes('.git');
}
