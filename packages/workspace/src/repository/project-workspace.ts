import {
  access,
  constants,
  lstat,
  mkdir,
  readFile,
  readdir,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { redactSecrets } from '@baton/core';
import { WorkspaceError, type WorkspaceErrorCode } from '../errors.js';
import { DEFAULT_SANDBOX_SETUP, type SandboxSetup } from '../sandbox/command-sandbox.js';
import { runCommitHooks } from '../sandbox/hook-runner.js';
import { DEFAULT_SANDBOX_POLICY } from '../sandbox/policy.js';
import {
  measureWorkspace,
  workspaceLimits,
  workspaceOverLimit,
} from '../sandbox/workspace-usage.js';
import { gitMessage, redactUrlCredentials, runGit, type GitOutput } from './git.js';
import { DEFAULT_MAX_FILE_BYTES } from './file-limits.js';
import { ensureSecretExcludes, hasSecretFileName, looksLikeSecretFile } from './secret-files.js';
import { isCommittablePath, listWorktreeFiles, type SpecialFileKind } from './worktree-files.js';
import { isRemoteUrl, projectBranch } from './source.js';
import { BATON_HOOKS_TRAILER, BATON_PROJECT_TRAILER, formatCommitMessage } from './trailers.js';

/** How pushes are retried. */
export interface PushRetryOptions {
  /** Attempts of the final push at the end of a session. Default 4. */
  attempts?: number;
  /** Delay after the first failed push (ms), doubled after each further failure. Default 500. */
  initialDelayMs?: number;
  /** Longest delay between two attempts (ms). Default 30_000. */
  maxDelayMs?: number;
}

/** Options of `createProjectWorkspace`. */
export interface ProjectWorkspaceOptions {
  projectId: string;
  /** The working tree: the directory the agent's tools work in. */
  dir: string;
  /**
   * Baton's git directory for `dir`, outside it: the agent can change every file of the working
   * tree but never the repository configuration or hooks git runs with.
   */
  gitDir: string;
  /** The project's remote: the `--repo` path or URL, or a Baton-owned bare repository. */
  remote: string;
  /** Create `remote` as an empty bare repository when it does not exist. Default false. */
  createRemote?: boolean;
  /** The commit `baton/<project-id>` starts from; `null` starts from nothing. */
  baseCommit: string | null;
  /** Commit without running hooks (`--skip-hooks`). Default false. */
  skipHooks?: boolean;
  /**
   * Where the repository's commit hooks run: the session's sandbox, as the agent's commands
   * (`sandbox/hook-runner.ts`); never on the host unless it is `{ mode: 'off' }`. Default:
   * the sandbox with the default policy.
   */
  hookSandbox?: SandboxSetup | undefined;
  /**
   * Files larger than this (bytes) are left out of checkpoints, like secrets, and listed in
   * `Checkpoint.tooLarge`: a model's 300 MB output must not land on the user's branch.
   * Default 52_428_800 (50 MiB).
   */
  maxFileBytes?: number | undefined;
  /** Retries of pushes. */
  push?: PushRetryOptions;
  /** Longest wait for one fetch or push (ms). Default 120_000. */
  networkTimeoutMs?: number;
  /**
   * Asked right before every push; a returned reason refuses it (`push_failed` with that
   * message, no retry, the commit kept in the clone). A worker answers from the project's lease,
   * so a session that lost the project never pushes over its new holder's work.
   */
  mayPush?: (() => Promise<string | undefined>) | undefined;
  /**
   * The user said at creation that `dir`'s own files may become the project's first checkpoint
   * (`--adopt`, `adoptWorkspace`). Checked again here, on the machine that prepares it: a `dir`
   * holding files Baton did not put there (no `.git` link to this clone) is refused unless this
   * is set and the project has no checkpoint yet, and the checkout never overwrites one of them.
   * Default false.
   */
  adopt?: boolean | undefined;
}

/** Where `prepare` left the workspace. */
export interface PreparedWorkspace {
  /** `baton/<project-id>`. */
  branch: string;
  /** The commit the working tree now holds; `null` when the branch has no commit yet. */
  head: string | null;
  /** The branch tip on the remote before the session (`null`: not pushed yet). */
  remoteHead: string | null;
  /**
   * True when this worker's clone held commits the remote did not have yet (a push that failed
   * at the end of an earlier session): the session continues from them and pushes them.
   */
  recovered: boolean;
}

/** What a checkpoint asks for: the commit message's subject and trailers. */
export interface CheckpointRequest {
  subject: string;
  /** `Key: value` lines after the body (session id, outcome, ...). `Baton-Project` is added. */
  trailers?: ReadonlyArray<readonly [string, string]>;
  /** Free text between subject and trailers. */
  body?: string;
  /**
   * Keep retrying the push with backoff until it lands or the attempts run out (the end of a
   * session). Default false: one attempt, unless an earlier failure's backoff has not run out.
   */
  final?: boolean;
}

/** What happened to the commit hooks of a checkpoint. */
export type CheckpointHooks = 'passed' | 'refused' | 'skipped' | 'none';

/** The result of one checkpoint. */
export interface Checkpoint {
  /** The commit this checkpoint made; `null` when nothing had changed. */
  commit: string | null;
  /** The branch tip after it (a previous checkpoint's commit when nothing changed). */
  head: string | null;
  message: string;
  /** Files left out because they look like secrets (`.env`, `*.pem`, key files, files containing keys). */
  skipped: string[];
  /** Files left out because they are larger than `maxFileBytes`, with their size. */
  tooLarge?: Array<{ path: string; bytes: number }>;
  /** FIFOs, sockets and devices in the working tree: git cannot store them, so they are left out. */
  special?: Array<{ path: string; kind: SpecialFileKind }>;
  /** `refused`: a hook failed, so the commit was made without hooks and says so in a trailer. */
  hooks: CheckpointHooks;
  /** The refusing hook's output (first lines, workspace paths made relative). */
  hookOutput?: string;
  /** True when `head` is on the remote. */
  pushed: boolean;
  /** Why the push did not happen (`push_rejected`: not a fast-forward; never retried). */
  pushError?: {
    code: Extract<WorkspaceErrorCode, 'push_rejected' | 'push_failed'>;
    message: string;
  };
}

/** One project's Baton-owned clone: bring it to the last checkpoint, save checkpoints, push. */
export interface ProjectWorkspace {
  readonly projectId: string;
  readonly dir: string;
  readonly gitDir: string;
  readonly branch: string;
  /**
   * Makes `dir` this project's clone at the branch's last checkpoint: creates the git directory
   * (or reuses it), fetches `baton/<project-id>` and resets the working tree to it, or starts
   * the branch at the base commit. `lastCheckpoint` is the last checkpoint recorded for the
   * project; the remote branch must still contain it.
   */
  prepare(lastCheckpoint: string | null): Promise<PreparedWorkspace>;
  /** Commits every change (secret files left out) and pushes the branch. Never force-pushes. */
  checkpoint(request: CheckpointRequest): Promise<Checkpoint>;
}

const DEFAULT_PUSH: Required<PushRetryOptions> = {
  attempts: 4,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
};

/** The largest hook output passed on (it reaches the model). */
const HOOK_OUTPUT_LIMIT = 2_000;

export function createProjectWorkspace(options: ProjectWorkspaceOptions): ProjectWorkspace {
  return new GitProjectWorkspace(options);
}

class GitProjectWorkspace implements ProjectWorkspace {
  readonly projectId: string;
  readonly dir: string;
  readonly gitDir: string;
  readonly branch: string;
  readonly #options: ProjectWorkspaceOptions;
  readonly #push: Required<PushRetryOptions>;
  readonly #networkTimeoutMs: number;
  /** `-c` arguments of every commit: identity when none is configured, no hooks. */
  #commitConfig: string[] = [];
  /** The repository's hooks directory when it has commit hooks (run in the sandbox). */
  #hooksDir: string | null = null;
  #head: string | null = null;
  #pushedHead: string | null = null;
  #pushFailures = 0;
  #nextPushAt = 0;
  #lastPushError: Checkpoint['pushError'];
  #prepared = false;
  /**
   * Files the last checkpoint left out after staging them (secret by content, too large), by
   * path, with the size and mtime they had: unchanged, the next checkpoint leaves them out
   * without staging, scanning and unstaging them again (30,000 of them cost minutes each time).
   */
  #leftOut = new Map<string, { stamp: string; bytes: number; tooLarge: boolean }>();

  constructor(options: ProjectWorkspaceOptions) {
    this.#options = options;
    this.projectId = options.projectId;
    this.dir = path.resolve(options.dir);
    this.gitDir = path.resolve(options.gitDir);
    this.branch = projectBranch(options.projectId);
    const relative = path.relative(this.dir, this.gitDir);
    if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) {
      // Inside the working tree the agent could write the config and hooks git runs with.
      throw new WorkspaceError('git', 'the git directory must be outside the workspace.');
    }
    this.#push = { ...DEFAULT_PUSH, ...options.push };
    this.#networkTimeoutMs = options.networkTimeoutMs ?? 120_000;
  }

  #git(args: readonly string[], timeoutMs?: number): Promise<GitOutput> {
    return runGit(args, {
      gitDir: this.gitDir,
      workTree: this.dir,
      cwd: this.dir,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  }

  /**
   * git's words with this clone's host paths replaced (`<git directory>`, `<workspace>`): they
   * reach the model and the project's status reason.
   */
  #gitMessage(output: GitOutput): string {
    return gitMessage(output)
      .split(this.gitDir)
      .join('<git directory>')
      .split(this.dir)
      .join('<workspace>');
  }

  async #gitOk(args: readonly string[], what: string): Promise<string> {
    const output = await this.#git(args);
    if (output.code !== 0) throw new WorkspaceError('git', `${what}: ${this.#gitMessage(output)}`);
    return output.stdout;
  }

  async #revParse(ref: string): Promise<string | null> {
    const output = await this.#git(['rev-parse', '-q', '--verify', `${ref}^{commit}`]);
    return output.code === 0 ? output.stdout.trim() : null;
  }

  /**
   * The branch tip right after a commit: read from the loose ref the commit just wrote (one git
   * process fewer per checkpoint), else asked of git (a packed ref, another ref backend).
   */
  async #branchTip(): Promise<string | null> {
    const loose = await readFile(
      path.join(this.gitDir, 'refs', 'heads', this.branch),
      'utf8',
    ).catch(() => '');
    const id = loose.trim();
    return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(id) ? id : this.#revParse('HEAD');
  }

  async #isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return (await this.#git(['merge-base', '--is-ancestor', ancestor, descendant])).code === 0;
  }

  get #remoteName(): string {
    return redactUrlCredentials(this.#options.remote);
  }

  async prepare(lastCheckpoint: string | null): Promise<PreparedWorkspace> {
    await this.#ensureRemote();
    const foreign = await this.#holdsForeignFiles();
    if (foreign && this.#options.adopt !== true) {
      throw new WorkspaceError(
        'workspace_not_empty',
        `the workspace ${this.dir} already holds files Baton did not create, and the project was not created with --adopt; nothing in it was changed. Empty it, or create the project with --adopt to make them its first checkpoint.`,
      );
    }
    try {
      return await this.#prepareClone(lastCheckpoint, foreign);
    } catch (error) {
      // The clone made for a directory it could not take goes, with its `.git` link (there was
      // no `.git` before): the next preparation decides again, and no user file was touched.
      if (foreign) {
        await rm(path.join(this.dir, '.git'), { force: true });
        await rm(this.gitDir, { recursive: true, force: true });
      }
      throw error;
    }
  }

  async #prepareClone(lastCheckpoint: string | null, foreign: boolean): Promise<PreparedWorkspace> {
    await this.#ensureGitDir();
    const remoteHead = await this.#fetchBranch();
    const localHead = await this.#revParse(`refs/heads/${this.branch}`);
    let start: string | null;
    let recovered = false;
    if (remoteHead !== null) {
      if (lastCheckpoint !== null && !(await this.#isAncestor(lastCheckpoint, remoteHead))) {
        throw new WorkspaceError(
          'branch_diverged',
          `${this.branch} in ${this.#remoteName} no longer contains the last checkpoint ${lastCheckpoint.slice(0, 12)}; it was rewritten outside Baton, which never force-pushes.`,
        );
      }
      start = remoteHead;
      if (
        localHead !== null &&
        localHead !== remoteHead &&
        (await this.#isAncestor(remoteHead, localHead))
      ) {
        start = localHead;
        recovered = true;
      }
    } else if (lastCheckpoint !== null) {
      if (localHead !== null && (await this.#isAncestor(lastCheckpoint, localHead))) {
        // The remote lost the branch (a Baton-owned remote recreated, say); this clone still
        // has the work, so the next push puts it back.
        start = localHead;
        recovered = true;
      } else {
        throw new WorkspaceError(
          'branch_diverged',
          `${this.#remoteName} has no branch ${this.branch}, but the project's last checkpoint is ${lastCheckpoint.slice(0, 12)}${this.#options.createRemote === true ? ': a project without --repo keeps its code in the BATON_HOME of the worker that ran it; give it a --repo every worker can reach' : '; it was deleted outside Baton'}.`,
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
      // The adopted directory became the first checkpoint elsewhere (another machine, or a clone
      // since lost): these files are not what the user adopted, and a checkout would overwrite them.
      throw new WorkspaceError(
        'workspace_not_empty',
        `the workspace ${this.dir} on this machine holds files Baton did not create, and the project already adopted its workspace at its first checkpoint; nothing in it was changed. Empty or move the directory, then resume the project.`,
      );
    }
    await this.#checkout(start, { keepUntracked: foreign });
    this.#head = start;
    this.#pushedHead = remoteHead;
    this.#pushFailures = 0;
    this.#nextPushAt = 0;
    this.#lastPushError = undefined;
    this.#prepared = true;
    return { branch: this.branch, head: start, remoteHead, recovered };
  }

  async #ensureRemote(): Promise<void> {
    if (this.#options.createRemote !== true) return;
    const remote = this.#options.remote;
    if (isRemoteUrl(remote)) return;
    if ((await stat(path.join(remote, 'HEAD')).catch(() => null)) !== null) return;
    await mkdir(remote, { recursive: true });
    const init = await runGit(['init', '-q', '--bare', remote]);
    if (init.code !== 0) {
      throw new WorkspaceError(
        'git',
        `cannot create the project's repository: ${this.#gitMessage(init)}`,
      );
    }
  }

  /**
   * True when this machine has no clone of the project yet and `dir` already holds files Baton
   * did not put there (read before anything is written in it). A `.git` file naming another
   * git directory (a user's linked worktree) is refused: Baton would overwrite it. A checkout of
   * its own (`.git` directory) is refused by `#ensureGitDir`; in a clone made here, whatever is
   * in `dir` is the project's.
   */
  async #holdsForeignFiles(): Promise<boolean> {
    if ((await stat(path.join(this.gitDir, 'HEAD')).catch(() => null)) !== null) return false;
    const entries = await readdir(this.dir).catch(() => []);
    if (entries.length === 0) return false;
    const dotGitPath = path.join(this.dir, '.git');
    const dotGit = await lstat(dotGitPath).catch(() => null);
    if (dotGit?.isDirectory() === true) return false;
    if (dotGit === null) return true;
    const link = await readFile(dotGitPath, 'utf8').catch(() => '');
    if (link.trim() === `gitdir: ${this.gitDir}`) return false;
    throw new WorkspaceError(
      'workspace_taken',
      `the workspace ${this.dir} is a git checkout of its own (its .git names another repository); give it as --repo instead (Baton never writes a checkout it did not make).`,
    );
  }

  async #ensureGitDir(): Promise<void> {
    const dirInfo = await stat(this.dir).catch(() => null);
    if (dirInfo !== null && !dirInfo.isDirectory()) {
      throw new WorkspaceError('workspace_taken', `the workspace ${this.dir} is not a directory.`);
    }
    const dotGitPath = path.join(this.dir, '.git');
    const dotGit = await lstat(dotGitPath).catch(() => null);
    const known = (await stat(path.join(this.gitDir, 'HEAD')).catch(() => null)) !== null;
    if (dotGit !== null && !dotGit.isFile()) {
      if (!known) {
        throw new WorkspaceError(
          'workspace_taken',
          `the workspace ${this.dir} is a git repository of its own; give it as --repo instead (Baton never writes a checkout it did not make).`,
        );
      }
      // The agent made it in Baton's own clone; git never reads it, and it must not shadow the
      // link to Baton's git directory.
      await rm(dotGitPath, { recursive: true, force: true });
    }
    await mkdir(this.dir, { recursive: true });
    if (!known) {
      await mkdir(this.gitDir, { recursive: true });
      const init = await runGit(['init', '-q', '--bare', this.gitDir]);
      if (init.code !== 0) {
        throw new WorkspaceError(
          'git',
          `cannot create the workspace's git directory: ${this.#gitMessage(init)}`,
        );
      }
      await this.#gitOk(['config', 'core.bare', 'false'], 'git config');
      // Hooks run for commits only (see #resolveCommitConfig); checkouts and pushes run none.
      await this.#gitOk(
        ['config', 'core.hooksPath', path.join(this.gitDir, 'no-hooks')],
        'git config',
      );
    }
    // Always rewritten: the agent may have replaced it, and git must find Baton's directory.
    await writeFile(path.join(this.dir, '.git'), `gitdir: ${this.gitDir}\n`);
    await ensureSecretExcludes(this.gitDir);
    // A worker killed mid-command leaves lock files behind; the project lease says nobody else
    // is using this clone now. A FETCH_HEAD of an older Baton names the remote.
    await Promise.all(
      [
        'index.lock',
        'HEAD.lock',
        path.join('refs', 'heads', `${this.branch}.lock`),
        'FETCH_HEAD',
      ].map((name) => rm(path.join(this.gitDir, name), { force: true })),
    );
    const url = (await this.#git(['config', '--get', 'remote.origin.url'])).stdout.trim();
    if (url !== this.#options.remote) {
      await this.#gitOk(['config', 'remote.origin.url', this.#options.remote], 'git config');
    }
    await this.#resolveCommitConfig();
  }

  async #resolveCommitConfig(): Promise<void> {
    const config: string[] = [];
    const email = await runGit(['config', '--get', 'user.email'], {
      cwd: this.dir,
      gitDir: this.gitDir,
    });
    if (email.code !== 0) config.push('-c', 'user.name=Baton', '-c', 'user.email=baton@localhost');
    const hooks = await this.#commitHooksPath();
    this.#hooksDir = hooks !== null && (await hasCommitHook(hooks)) ? hooks : null;
    // Host git runs no hook at all: the hooks ran in the sandbox before (runCommitHooks).
    config.push('-c', `core.hooksPath=${path.join(this.gitDir, 'no-hooks')}`);
    this.#commitConfig = config;
  }

  /**
   * The hooks a checkpoint commit runs: the source repository's own hooks directory for a local
   * repository (honouring its `core.hooksPath`), else the worker's global `core.hooksPath`.
   * Both live outside the workspace, so the agent cannot write the hooks the worker runs.
   */
  async #commitHooksPath(): Promise<string | null> {
    const remote = this.#options.remote;
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

  /** `refs/heads/<branch>` of the remote, fetched; `null` when the remote has no such branch. */
  async #fetchBranch(): Promise<string | null> {
    const tracking = `refs/remotes/origin/${this.branch}`;
    const fetched = await this.#git(
      [
        'fetch',
        '-q',
        '--no-tags',
        // FETCH_HEAD would name the remote (a host path under BATON_HOME for a project without
        // --repo) to git inside the sandbox, which shows this directory read-only.
        '--no-write-fetch-head',
        'origin',
        `+refs/heads/${this.branch}:${tracking}`,
      ],
      this.#networkTimeoutMs,
    );
    if (fetched.code !== 0) {
      if (/couldn't find remote ref/i.test(fetched.stderr)) {
        await this.#git(['update-ref', '-d', tracking]);
        return null;
      }
      throw new WorkspaceError(
        'repo_unreachable',
        `cannot fetch ${this.branch} from ${this.#remoteName}: ${this.#gitMessage(fetched)}`,
      );
    }
    return this.#revParse(tracking);
  }

  async #baseCommit(): Promise<string | null> {
    const base = this.#options.baseCommit;
    if (base === null) return null;
    if ((await this.#revParse(base)) !== null) return base;
    const fetched = await this.#git(
      ['fetch', '-q', '--no-tags', '--no-write-fetch-head', 'origin', base],
      this.#networkTimeoutMs,
    );
    if (fetched.code !== 0 || (await this.#revParse(base)) === null) {
      throw new WorkspaceError(
        'repo_unreachable',
        `cannot fetch the base commit ${base.slice(0, 12)} from ${this.#remoteName}: ${this.#gitMessage(fetched)}`,
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
    if (start === null) {
      await this.#gitOk(['symbolic-ref', 'HEAD', `refs/heads/${this.branch}`], 'git symbolic-ref');
      return;
    }
    if (!options.keepUntracked) {
      await this.#gitOk(['checkout', '-q', '-f', '-B', this.branch, start], 'git checkout');
      return;
    }
    // An adopted directory over a base commit: without -f, git refuses to overwrite any of the
    // user's files the base also has, and writes nothing.
    const checkout = await this.#git(['checkout', '-q', '-B', this.branch, start]);
    if (checkout.code !== 0) {
      const clashing = checkout.stderr
        .split('\n')
        .filter((line) => /^\t/.test(line))
        .map((line) => line.trim());
      throw new WorkspaceError(
        'workspace_not_empty',
        `the workspace ${this.dir} holds files the base commit ${start.slice(0, 12)} also has${clashing.length === 0 ? '' : ` (${clashing.slice(0, 8).join(', ')}${clashing.length > 8 ? ` and ${clashing.length - 8} more` : ''})`}; adopting it would overwrite them, so nothing in it was changed. Move them out, or start the project without --repo.`,
      );
    }
  }

  async checkpoint(request: CheckpointRequest): Promise<Checkpoint> {
    if (!this.#prepared) {
      throw new WorkspaceError('git', 'checkpoint before prepare: the workspace is not ready.');
    }
    // Over its limits, nothing is committed (and nothing pushed) until files are deleted: what a
    // command stopped at the limit left behind must not land on the user's branch.
    const setup = this.#options.hookSandbox ?? DEFAULT_SANDBOX_SETUP;
    const limits = workspaceLimits(setup.policy ?? DEFAULT_SANDBOX_POLICY);
    const over = workspaceOverLimit(await measureWorkspace(this.dir, limits), limits);
    if (over !== null) throw new WorkspaceError('workspace_full', over);
    const trailers: Array<readonly [string, string]> = [
      ...(request.trailers ?? []),
      [BATON_PROJECT_TRAILER, this.projectId],
    ];
    let message = formatCommitMessage(request.subject, trailers, request.body);
    let { skipped, tooLarge, special, changed } = await this.#stage();
    let commit: string | null = null;
    let hooks: CheckpointHooks = 'none';
    let hookOutput: string | undefined;
    if (changed) {
      const hooksDir = this.#options.skipHooks === true ? null : this.#hooksDir;
      hooks = this.#options.skipHooks === true ? 'skipped' : hooksDir !== null ? 'passed' : 'none';
      const ran =
        hooksDir === null
          ? undefined
          : await runCommitHooks({
              workspace: this.dir,
              gitDir: this.gitDir,
              hooksDir,
              setup: this.#options.hookSandbox ?? DEFAULT_SANDBOX_SETUP,
              message: redactSecrets(message).text,
            });
      if (ran?.outcome === 'refused') {
        // A hook refused: the work is saved anyway, without hooks, and the commit says so.
        hookOutput = this.#hookOutput({ code: 1, stdout: ran.output, stderr: '', timedOut: false });
        hooks = 'refused';
        message = formatCommitMessage(
          request.subject,
          [
            ...trailers,
            [BATON_HOOKS_TRAILER, `refused (${firstLine(hookOutput)}); committed without hooks`],
          ],
          request.body,
        );
      } else if (ran?.outcome === 'passed') {
        // Kept only while it still names the project: the branch's ownership check reads it.
        if (ran.message.includes(`${BATON_PROJECT_TRAILER}: ${this.projectId}`)) {
          message = ran.message;
        }
        // What a formatter in the hook changed is part of the commit, as with lint-staged.
        ({ skipped, tooLarge, special, changed } = await this.#stage());
      }
      // A hook may have undone every change (a formatter): then there is nothing to commit.
      const committed = changed ? await this.#commit(message) : undefined;
      await ran?.finish(committed?.code === 0 && ran.outcome === 'passed');
      if (committed !== undefined && committed.code !== 0) {
        throw new WorkspaceError('git', `git commit failed: ${this.#gitMessage(committed)}`);
      }
      if (committed !== undefined) {
        commit = await this.#branchTip();
        this.#head = commit;
      }
    }
    const push = await this.#pushHead(request.final === true);
    return {
      commit,
      head: this.#head,
      message,
      skipped,
      ...(tooLarge.length === 0 ? {} : { tooLarge }),
      ...(special.length === 0 ? {} : { special }),
      hooks,
      ...(hookOutput === undefined ? {} : { hookOutput }),
      pushed: push.pushed,
      ...(push.error === undefined ? {} : { pushError: push.error }),
    };
  }

  /**
   * Stages every change except secret-looking files. Not `git add -A`: it would open every
   * repository below the root (see `listWorktreeFiles`); files of nested repositories are
   * committed as plain files and every `.git` is left out. Files over `maxFileBytes` are left
   * out with the secrets.
   */
  async #stage(): Promise<{
    skipped: string[];
    tooLarge: Array<{ path: string; bytes: number }>;
    special: Array<{ path: string; kind: SpecialFileKind }>;
    changed: boolean;
  }> {
    const index = await this.#indexModes();
    const gitlinks = new Set(
      [...index].filter(([, mode]) => mode === '160000').map(([tracked]) => tracked),
    );
    const special: Array<{ path: string; kind: SpecialFileKind }> = [];
    // Secret names are in Baton's `info/exclude`: ignored, yet named in the checkpoint as secrets.
    const ignoredSecrets: string[] = [];
    const files = await listWorktreeFiles({
      dir: this.dir,
      ignored: (paths) => this.#ignoredPaths(paths),
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
      const info = await lstat(path.join(this.dir, tracked)).catch(() => null);
      if (info?.isFile() === true || info?.isSymbolicLink() === true) {
        present.add(tracked);
        files.push(tracked);
      }
    }
    const removed = [...index.keys()].filter(
      (tracked) => index.get(tracked) !== '160000' && !present.has(tracked),
    );
    const stillLeftOut = new Map<string, { stamp: string; bytes: number; tooLarge: boolean }>();
    for (const file of files) {
      const known = this.#leftOut.get(file);
      if (known === undefined || index.has(file)) continue;
      const info = await lstat(path.join(this.dir, file)).catch(() => null);
      if (info !== null && `${info.size}:${info.mtimeMs}` === known.stamp) {
        stillLeftOut.set(file, known);
      }
    }
    await this.#gitStdin(['update-index', '-z', '--force-remove', '--stdin'], removed, 'git rm');
    const added = await this.#gitStdin(
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
      await this.#gitOk(['diff', '--cached', '--name-only', '-z', '--no-renames'], 'git diff')
    )
      .split('\0')
      .filter(Boolean);
    const skipped: string[] = [];
    const tooLarge: Array<{ path: string; bytes: number }> = [];
    const maxFileBytes = this.#options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    const leftOutNow = new Map(stillLeftOut);
    for (const [file, known] of stillLeftOut) {
      if (known.tooLarge) tooLarge.push({ path: file, bytes: known.bytes });
      else skipped.push(file);
    }
    for (const file of staged) {
      const info = await lstat(path.join(this.dir, file)).catch(() => null);
      const bytes = info?.size ?? 0;
      const stamp = `${bytes}:${info?.mtimeMs ?? 0}`;
      if (bytes > maxFileBytes) {
        tooLarge.push({ path: file, bytes });
        leftOutNow.set(file, { stamp, bytes, tooLarge: true });
      } else if (await looksLikeSecretFile(this.dir, file)) {
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
      const unstage =
        this.#head !== null
          ? ['reset', '-q', '--pathspec-from-file=-', '--pathspec-file-nul']
          : ['rm', '--cached', '-q', '--pathspec-from-file=-', '--pathspec-file-nul'];
      const output = await runGit(['--literal-pathspecs', ...unstage], {
        gitDir: this.gitDir,
        workTree: this.dir,
        cwd: this.dir,
        input: `${leftOut.join('\0')}\0`,
      });
      if (output.code !== 0) {
        throw new WorkspaceError(
          'git',
          `git could not unstage secret or large files: ${this.#gitMessage(output)}`,
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

  /** Path -> mode of every index entry. */
  async #indexModes(): Promise<Map<string, string>> {
    const listed = await this.#gitOk(['ls-files', '-z', '-s'], 'git ls-files');
    const modes = new Map<string, string>();
    for (const record of listed.split('\0')) {
      const tab = record.indexOf('\t');
      if (tab === -1) continue;
      modes.set(record.slice(tab + 1), record.slice(0, record.indexOf(' ')));
    }
    return modes;
  }

  /** Which of `paths` git's ignore rules exclude (tracked files never are). */
  async #ignoredPaths(paths: readonly string[]): Promise<ReadonlySet<string>> {
    if (paths.length === 0) return new Set();
    const output = await runGit(['check-ignore', '-z', '--stdin'], {
      gitDir: this.gitDir,
      workTree: this.dir,
      cwd: this.dir,
      input: `${paths.join('\0')}\0`,
    });
    if (output.code !== 0 && output.code !== 1) {
      throw new WorkspaceError('git', `git check-ignore failed: ${this.#gitMessage(output)}`);
    }
    return new Set(output.stdout.split('\0').filter(Boolean));
  }

  /** A git command reading NUL-separated `paths` on stdin (no E2BIG, whatever their number). */
  /** Runs git with `paths` on stdin (NUL-separated); returns what it said on stderr. */
  async #gitStdin(
    args: readonly string[],
    paths: readonly string[],
    what: string,
  ): Promise<string> {
    if (paths.length === 0) return '';
    const output = await runGit(args, {
      gitDir: this.gitDir,
      workTree: this.dir,
      cwd: this.dir,
      input: `${paths.join('\0')}\0`,
    });
    if (output.code !== 0) throw new WorkspaceError('git', `${what}: ${this.#gitMessage(output)}`);
    return output.stderr;
  }

  #commit(message: string): Promise<GitOutput> {
    // A subject or body can quote what the model wrote; a pushed commit message is public.
    return this.#git([
      ...this.#commitConfig,
      'commit',
      '-q',
      '--no-verify',
      '-m',
      redactSecrets(message).text,
    ]);
  }

  /** A hook's output as the model may read it: no host paths, bounded. */
  #hookOutput(output: GitOutput): string {
    const text = `${output.stdout}\n${output.stderr}`
      .split(this.dir)
      .join('.')
      .split(this.gitDir)
      .join('.git')
      .trim();
    const safe = redactUrlCredentials(text === '' ? 'the hook failed without output' : text);
    return safe.length > HOOK_OUTPUT_LIMIT ? `${safe.slice(0, HOOK_OUTPUT_LIMIT)}...` : safe;
  }

  async #pushHead(final: boolean): Promise<{ pushed: boolean; error?: Checkpoint['pushError'] }> {
    const head = this.#head;
    if (head === null) return { pushed: false };
    if (head === this.#pushedHead) return { pushed: true };
    if (this.#lastPushError?.code === 'push_rejected') {
      return { pushed: false, error: this.#lastPushError };
    }
    const attempts = final ? this.#push.attempts : 1;
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      const wait = this.#nextPushAt - Date.now();
      if (wait > 0) {
        // Not yet: an earlier push failed and its backoff has not run out.
        if (!final)
          return { pushed: false, ...(this.#lastPushError ? { error: this.#lastPushError } : {}) };
        await sleep(wait);
      }
      const refused = await this.#options.mayPush?.();
      if (refused !== undefined) {
        return { pushed: false, error: { code: 'push_failed', message: refused } };
      }
      const result = await this.#pushOnce(head);
      if (result === null) {
        this.#pushedHead = head;
        this.#pushFailures = 0;
        this.#nextPushAt = 0;
        this.#lastPushError = undefined;
        return { pushed: true };
      }
      this.#lastPushError = result;
      if (result.code === 'push_rejected') return { pushed: false, error: result };
      this.#pushFailures += 1;
      this.#nextPushAt =
        Date.now() +
        Math.min(this.#push.maxDelayMs, this.#push.initialDelayMs * 2 ** (this.#pushFailures - 1));
    }
    return { pushed: false, ...(this.#lastPushError ? { error: this.#lastPushError } : {}) };
  }

  /** One push of `head` to the branch; `null` when it landed. */
  async #pushOnce(head: string): Promise<NonNullable<Checkpoint['pushError']> | null> {
    const output = await this.#git(
      ['push', '--porcelain', 'origin', `${head}:refs/heads/${this.branch}`],
      this.#networkTimeoutMs,
    );
    const line = output.stdout
      .split('\n')
      .find((text) => text.includes(`refs/heads/${this.branch}`));
    if (output.code === 0 && line !== undefined && !line.startsWith('!')) return null;
    if (line?.startsWith('!') === true) {
      const summary = line.split('\t').slice(2).join(' ').trim();
      if (/\[rejected\]/.test(summary)) {
        return {
          code: 'push_rejected',
          message: `${this.#remoteName} refused ${this.branch} as not a fast-forward (${summary}); someone else changed the branch, and Baton never force-pushes.`,
        };
      }
      // A server-side hook (pre-receive, update) says why in `remote:` lines: the user needs them.
      const said = remoteMessage(output.stderr);
      return {
        code: 'push_failed',
        message: `${this.#remoteName} refused the push of ${this.branch}: ${summary}${said === '' ? '' : ` (the remote said: ${said})`}`,
      };
    }
    return {
      code: 'push_failed',
      message: `cannot push ${this.branch} to ${this.#remoteName}: ${this.#gitMessage(output)}`,
    };
  }
}

/** What the remote's hooks printed (`remote: ...` lines), redacted, at most 300 characters. */
function remoteMessage(stderr: string): string {
  const said = stderr
    .split('\n')
    .filter((line) => line.startsWith('remote:'))
    // The remote's text reaches terminals and logs: no control characters.
    .map((line) =>
      line
        .slice('remote:'.length)
        // eslint-disable-next-line no-control-regex -- removing them is the point
        .replace(/[\u0000-\u001f\u007f]/g, '')
        .trim(),
    )
    .filter((line) => line !== '')
    .join('; ');
  return redactUrlCredentials(said).slice(0, 300);
}

function firstLine(text: string): string {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '') ?? '';
  return line.trim().slice(0, 120);
}

/** Hooks a commit runs; a directory holding only git's `*.sample` files has none of them. */
const COMMIT_HOOKS = ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit'];

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
