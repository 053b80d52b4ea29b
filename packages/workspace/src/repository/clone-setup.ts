import { access, constants, lstat, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError } from '../errors.js';
import {
  adoptedElsewhere,
  clashesWithBase,
  holdsForeignFiles,
  notAdopted,
} from './adoption-checks.js';
import type { CloneGit } from './clone-git.js';
import { runGit } from './git.js';
import { ensureSecretExcludes } from './secret-files.js';
import { isRemoteUrl } from './source.js';

/** What `CloneSetup` needs of `ProjectWorkspaceOptions`. */
export interface CloneSetupOptions {
  /** Create the remote as an empty bare repository when it does not exist. */
  createRemote?: boolean | undefined;
  /** The commit the branch starts from; `null` starts from nothing. */
  baseCommit: string | null;
  /** Longest wait for one fetch (ms). */
  networkTimeoutMs: number;
  /** The user allowed `dir`'s own files to become the first checkpoint (`--adopt`). */
  adopt?: boolean | undefined;
}

/** Where the clone starts after `prepare`. */
export interface ClonePrepared {
  /** The commit the working tree now holds; `null` when the branch has no commit yet. */
  head: string | null;
  /** The branch tip on the remote before the session (`null`: not pushed yet). */
  remoteHead: string | null;
  /** The clone held commits the remote did not have yet: the session continues from them. */
  recovered: boolean;
}

/** Hooks a commit runs; a directory holding only git's `*.sample` files has none of them. */
const COMMIT_HOOKS = ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit'];

/**
 * Brings a project's clone to the branch's last checkpoint: the remote (made when Baton owns
 * it), Baton's git directory outside the working tree, the fetch, the start commit and the
 * checkout; and, on the way, how commits are made (identity, the repository's hooks).
 */
export class CloneSetup {
  readonly #git: CloneGit;
  readonly #options: CloneSetupOptions;
  /** `-c` arguments of every commit: identity when none is configured, no hooks. */
  #commitConfig: string[] = [];
  /** The repository's hooks directory when it has commit hooks (run in the sandbox). */
  #hooksDir: string | null = null;

  constructor(git: CloneGit, options: CloneSetupOptions) {
    this.#git = git;
    this.#options = options;
  }

  get commitConfig(): readonly string[] {
    return this.#commitConfig;
  }

  get hooksDir(): string | null {
    return this.#hooksDir;
  }

  async prepare(lastCheckpoint: string | null): Promise<ClonePrepared> {
    const { dir, gitDir } = this.#git;
    await this.#ensureRemote();
    const foreign = await holdsForeignFiles(dir, gitDir);
    if (foreign && this.#options.adopt !== true) throw notAdopted(dir);
    try {
      return await this.#prepareClone(lastCheckpoint, foreign);
    } catch (error) {
      // The clone made for a directory it could not take goes, with its `.git` link (there was
      // no `.git` before): the next preparation decides again, and no user file was touched.
      if (foreign) {
        await rm(path.join(dir, '.git'), { force: true });
        await rm(gitDir, { recursive: true, force: true });
      }
      throw error;
    }
  }

  async #prepareClone(lastCheckpoint: string | null, foreign: boolean): Promise<ClonePrepared> {
    const git = this.#git;
    const { branch } = git;
    await this.#ensureGitDir();
    const remoteHead = await git.fetchBranch(this.#options.networkTimeoutMs);
    const localHead = await git.revParse(`refs/heads/${branch}`);
    let start: string | null;
    let recovered = false;
    if (remoteHead !== null) {
      if (lastCheckpoint !== null && !(await git.isAncestor(lastCheckpoint, remoteHead))) {
        throw new WorkspaceError(
          'branch_diverged',
          `${branch} in ${git.remoteName} no longer contains the last checkpoint ${lastCheckpoint.slice(0, 12)}; it was rewritten outside Baton, which never force-pushes.`,
        );
      }
      start = remoteHead;
      if (
        localHead !== null &&
        localHead !== remoteHead &&
        (await git.isAncestor(remoteHead, localHead))
      ) {
        start = localHead;
        recovered = true;
      }
    } else if (lastCheckpoint !== null) {
      if (localHead !== null && (await git.isAncestor(lastCheckpoint, localHead))) {
        // The remote lost the branch (a Baton-owned remote recreated, say); this clone still
        // has the work, so the next push puts it back.
        start = localHead;
        recovered = true;
      } else {
        throw new WorkspaceError(
          'branch_diverged',
          `${git.remoteName} has no branch ${branch}, but the project's last checkpoint is ${lastCheckpoint.slice(0, 12)}${this.#options.createRemote === true ? ': a project without --repo keeps its code in the BATON_HOME of the worker that ran it; give it a --repo every worker can reach' : '; it was deleted outside Baton'}.`,
        );
      }
    } else if (localHead !== null) {
      // Commits of an earlier session on this worker that never reached the remote.
      start = localHead;
      recovered = true;
    } else {
      start = await this.#baseCommit();
    }
    if (foreign && (lastCheckpoint !== null || remoteHead !== null || localHead !== null)) {
      throw adoptedElsewhere(git.dir);
    }
    await this.#checkout(start, { keepUntracked: foreign });
    return { head: start, remoteHead, recovered };
  }

  async #ensureRemote(): Promise<void> {
    if (this.#options.createRemote !== true) return;
    const remote = this.#git.remote;
    if (isRemoteUrl(remote)) return;
    if ((await stat(path.join(remote, 'HEAD')).catch(() => null)) !== null) return;
    await mkdir(remote, { recursive: true });
    const init = await runGit(['init', '-q', '--bare', remote]);
    if (init.code !== 0) {
      throw new WorkspaceError(
        'git',
        `cannot create the project's repository: ${this.#git.message(init)}`,
      );
    }
  }

  async #ensureGitDir(): Promise<void> {
    const git = this.#git;
    const { dir, gitDir } = git;
    const dirInfo = await stat(dir).catch(() => null);
    if (dirInfo !== null && !dirInfo.isDirectory()) {
      throw new WorkspaceError('workspace_taken', `the workspace ${dir} is not a directory.`);
    }
    const dotGitPath = path.join(dir, '.git');
    const dotGit = await lstat(dotGitPath).catch(() => null);
    const known = (await stat(path.join(gitDir, 'HEAD')).catch(() => null)) !== null;
    if (dotGit !== null && !dotGit.isFile()) {
      if (!known) {
        throw new WorkspaceError(
          'workspace_taken',
          `the workspace ${dir} is a git repository of its own; give it as --repo instead (Baton never writes a checkout it did not make).`,
        );
      }
      // The agent made it in Baton's own clone; git never reads it, and it must not shadow the
      // link to Baton's git directory.
      await rm(dotGitPath, { recursive: true, force: true });
    }
    await mkdir(dir, { recursive: true });
    if (!known) {
      await mkdir(gitDir, { recursive: true });
      const init = await runGit(['init', '-q', '--bare', gitDir]);
      if (init.code !== 0) {
        throw new WorkspaceError(
          'git',
          `cannot create the workspace's git directory: ${git.message(init)}`,
        );
      }
      await git.ok(['config', 'core.bare', 'false'], 'git config');
      // Hooks run for commits only (see #resolveCommitConfig); checkouts and pushes run none.
      await git.ok(['config', 'core.hooksPath', path.join(gitDir, 'no-hooks')], 'git config');
    }
    // Always rewritten: the agent may have replaced it, and git must find Baton's directory.
    await writeFile(path.join(dir, '.git'), `gitdir: ${gitDir}\n`);
    await ensureSecretExcludes(gitDir);
    // A worker killed mid-command leaves lock files behind; the project lease says nobody else
    // is using this clone now. A FETCH_HEAD of an older Baton names the remote.
    await Promise.all(
      [
        'index.lock',
        'HEAD.lock',
        path.join('refs', 'heads', `${git.branch}.lock`),
        'FETCH_HEAD',
      ].map((name) => rm(path.join(gitDir, name), { force: true })),
    );
    const url = (await git.run(['config', '--get', 'remote.origin.url'])).stdout.trim();
    if (url !== git.remote) {
      await git.ok(['config', 'remote.origin.url', git.remote], 'git config');
    }
    await this.#resolveCommitConfig();
  }

  async #resolveCommitConfig(): Promise<void> {
    const { dir, gitDir } = this.#git;
    const config: string[] = [];
    const email = await runGit(['config', '--get', 'user.email'], { cwd: dir, gitDir });
    if (email.code !== 0) config.push('-c', 'user.name=Baton', '-c', 'user.email=baton@localhost');
    const hooks = await this.#commitHooksPath();
    this.#hooksDir = hooks !== null && (await hasCommitHook(hooks)) ? hooks : null;
    // Host git runs no hook at all: the hooks ran in the sandbox before (runCommitHooks).
    config.push('-c', `core.hooksPath=${path.join(gitDir, 'no-hooks')}`);
    this.#commitConfig = config;
  }

  /**
   * The hooks a checkpoint commit runs: the source repository's own hooks directory for a local
   * repository (honouring its `core.hooksPath`), else the worker's global `core.hooksPath`.
   * Both live outside the workspace, so the agent cannot write the hooks the worker runs.
   */
  async #commitHooksPath(): Promise<string | null> {
    const remote = this.#git.remote;
    if (this.#options.createRemote !== true && !isRemoteUrl(remote)) {
      const local = remote.toLowerCase().startsWith('file://')
        ? decodeURIComponent(remote.slice('file://'.length))
        : remote;
      const hooks = await runGit(['rev-parse', '--path-format=absolute', '--git-path', 'hooks'], {
        cwd: local,
      });
      if (hooks.code === 0 && hooks.stdout.trim() !== '') return hooks.stdout.trim();
    }
    const global = await runGit(['config', '--global', '--type=path', '--get', 'core.hooksPath']);
    return global.code === 0 && global.stdout.trim() !== '' ? global.stdout.trim() : null;
  }

  async #baseCommit(): Promise<string | null> {
    const git = this.#git;
    const base = this.#options.baseCommit;
    if (base === null) return null;
    if ((await git.revParse(base)) !== null) return base;
    const fetched = await git.run(
      ['fetch', '-q', '--no-tags', '--no-write-fetch-head', 'origin', base],
      this.#options.networkTimeoutMs,
    );
    if (fetched.code !== 0 || (await git.revParse(base)) === null) {
      throw new WorkspaceError(
        'repo_unreachable',
        `cannot fetch the base commit ${base.slice(0, 12)} from ${git.remoteName}: ${git.message(fetched)}`,
      );
    }
    return base;
  }

  /**
   * Points the branch at `start` and makes the tracked files of the working tree match it.
   * Untracked files are never removed: Baton deletes no file it did not write (files left out of
   * checkpoints as secrets, the user's files of an adopted directory); what a crashed session
   * left after its last checkpoint stays and the next checkpoint commits it.
   */
  async #checkout(start: string | null, options: { keepUntracked: boolean }): Promise<void> {
    const git = this.#git;
    if (start === null) {
      await git.ok(['symbolic-ref', 'HEAD', `refs/heads/${git.branch}`], 'git symbolic-ref');
      return;
    }
    if (!options.keepUntracked) {
      await git.ok(['checkout', '-q', '-f', '-B', git.branch, start], 'git checkout');
      return;
    }
    // An adopted directory over a base commit: without -f, git refuses to overwrite any of the
    // user's files the base also has, and writes nothing.
    const checkout = await git.run(['checkout', '-q', '-B', git.branch, start]);
    if (checkout.code !== 0) throw clashesWithBase(git.dir, start, checkout.stderr);
  }
}

async function hasCommitHook(directory: string): Promise<boolean> {
  const found = await Promise.all(
    COMMIT_HOOKS.map((name) =>
      access(path.join(directory, name), constants.X_OK).then(
        () => true,
        () => false,
      ),
    ),
  );
  return found.includes(true);
}
