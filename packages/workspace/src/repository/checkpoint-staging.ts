import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { WorkspaceError } from '../errors.js';
import type { CloneGit } from './clone-git.js';
import { DEFAULT_MAX_FILE_BYTES } from './file-limits.js';
import { hasSecretFileName, looksLikeSecretFile } from './secret-files.js';
import { isCommittablePath, listWorktreeFiles, type SpecialFileKind } from './worktree-files.js';

/** What one staging of the working tree left in the index, and what it left out. */
export interface StagedChanges {
  /** Left out as secrets (by name, ignored by Baton's excludes, or by content). */
  skipped: string[];
  /** Left out as larger than `maxFileBytes`. */
  tooLarge: Array<{ path: string; bytes: number }>;
  /** FIFOs, sockets, devices and names git refuses: never stored. */
  special: Array<{ path: string; kind: SpecialFileKind }>;
  /** True when the index now differs from the branch tip. */
  changed: boolean;
}

/** A file left out by the last staging, with the size and mtime it had then. */
interface LeftOut {
  stamp: string;
  bytes: number;
  tooLarge: boolean;
}

/**
 * Stages a clone's working tree for a checkpoint: every change except secret-looking and too
 * large files, and it remembers what it left out so that an unchanged file is not scanned again.
 */
export class CheckpointStaging {
  readonly #git: CloneGit;
  readonly #maxFileBytes: number;
  /**
   * Files the last checkpoint left out after staging them (secret by content, too large), by
   * path, with the size and mtime they had: unchanged, the next checkpoint leaves them out
   * without staging, scanning and unstaging them again (30,000 of them cost minutes each time).
   */
  #leftOut = new Map<string, LeftOut>();

  constructor(git: CloneGit, maxFileBytes: number | undefined) {
    this.#git = git;
    this.#maxFileBytes = maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /**
   * Stages every change except secret-looking files. Not `git add -A`: it would open every
   * repository below the root (see `listWorktreeFiles`); files of nested repositories are
   * committed as plain files and every `.git` is left out. Files over `maxFileBytes` are left
   * out with the secrets. `hasHead`: the branch has a commit (unstaging resets to it).
   */
  async stage(hasHead: boolean): Promise<StagedChanges> {
    const git = this.#git;
    const dir = git.dir;
    const index = await git.indexModes();
    const gitlinks = new Set(
      [...index].filter(([, mode]) => mode === '160000').map(([tracked]) => tracked),
    );
    const special: Array<{ path: string; kind: SpecialFileKind }> = [];
    // Secret names are in Baton's `info/exclude`: ignored, yet named in the checkpoint as secrets.
    const ignoredSecrets: string[] = [];
    const files = await listWorktreeFiles({
      dir,
      ignored: (paths) => git.ignoredPaths(paths),
      skipDirectories: gitlinks,
      onSpecialFile: (file, kind) => special.push({ path: file, kind }),
      onIgnoredFile: (file) => {
        if (hasSecretFileName(file)) ignoredSecrets.push(file);
      },
    });
    const present = new Set(files);
    for (const [tracked, mode] of index) {
      if (mode === '160000' || present.has(tracked) || !isCommittablePath(tracked)) continue;
      // Tracked files under an ignored directory stay tracked, as with `git add -A`.
      const info = await lstat(path.join(dir, tracked)).catch(() => null);
      if (info?.isFile() === true || info?.isSymbolicLink() === true) {
        present.add(tracked);
        files.push(tracked);
      }
    }
    const removed = [...index.keys()].filter(
      (tracked) => index.get(tracked) !== '160000' && !present.has(tracked),
    );
    const stillLeftOut = new Map<string, LeftOut>();
    for (const file of files) {
      const known = this.#leftOut.get(file);
      if (known === undefined || index.has(file)) continue;
      const info = await lstat(path.join(dir, file)).catch(() => null);
      if (info !== null && `${info.size}:${info.mtimeMs}` === known.stamp) {
        stillLeftOut.set(file, known);
      }
    }
    await git.withPaths(['update-index', '-z', '--force-remove', '--stdin'], removed, 'git rm');
    const added = await git.withPaths(
      ['update-index', '-z', '--add', '--remove', '--replace', '--stdin'],
      files.filter((file) => isCommittablePath(file) && !stillLeftOut.has(file)),
      'git add',
    );
    // A path git refuses to store is left out with a line on stderr, and the rest is added.
    for (const line of added.split('\n')) {
      const refused = /^Ignoring path (.+)$/.exec(line)?.[1];
      if (refused !== undefined) special.push({ path: refused, kind: 'refused-name' });
    }
    const staged = (
      await git.ok(['diff', '--cached', '--name-only', '-z', '--no-renames'], 'git diff')
    )
      .split('\0')
      .filter(Boolean);
    const skipped: string[] = [];
    const tooLarge: Array<{ path: string; bytes: number }> = [];
    const leftOutNow = new Map(stillLeftOut);
    for (const [file, known] of stillLeftOut) {
      if (known.tooLarge) tooLarge.push({ path: file, bytes: known.bytes });
      else skipped.push(file);
    }
    for (const file of staged) {
      const info = await lstat(path.join(dir, file)).catch(() => null);
      const bytes = info?.size ?? 0;
      const stamp = `${bytes}:${info?.mtimeMs ?? 0}`;
      if (bytes > this.#maxFileBytes) {
        tooLarge.push({ path: file, bytes });
        leftOutNow.set(file, { stamp, bytes, tooLarge: true });
      } else if (await looksLikeSecretFile(dir, file)) {
        skipped.push(file);
        leftOutNow.set(file, { stamp, bytes, tooLarge: false });
      }
      // One file's scan at a time on the main thread: heartbeats and other sessions run between.
      await yieldToEventLoop();
    }
    const leftOut = [...skipped, ...tooLarge.map((file) => file.path)].filter(
      (file) => !stillLeftOut.has(file),
    );
    if (leftOut.length > 0) {
      // Paths on stdin, not as arguments: 30,000 skipped files must not fail with E2BIG.
      const unstage = hasHead
        ? ['reset', '-q', '--pathspec-from-file=-', '--pathspec-file-nul']
        : ['rm', '--cached', '-q', '--pathspec-from-file=-', '--pathspec-file-nul'];
      const output = await git.withInput(
        ['--literal-pathspecs', ...unstage],
        `${leftOut.join('\0')}\0`,
      );
      if (output.code !== 0) {
        throw new WorkspaceError(
          'git',
          `git could not unstage secret or large files: ${git.message(output)}`,
        );
      }
    }
    this.#leftOut = leftOutNow;
    return {
      skipped: [...skipped, ...ignoredSecrets].sort(),
      tooLarge: tooLarge.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      special,
      changed: staged.length > leftOut.length,
    };
  }
}
