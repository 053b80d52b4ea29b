import path from 'node:path';
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
import { BranchPusher } from './branch-pusher.js';
import { CheckpointStaging } from './checkpoint-staging.js';
import { CloneGit } from './clone-git.js';
import { CloneSetup } from './clone-setup.js';
import { type GitOutput, redactUrlCredentials } from './git.js';
import { projectBranch } from './source.js';
import type { ReplacedStaleTip } from './stale-tip.js';
import {
  BATON_FENCE_TRAILER,
  BATON_HOOKS_TRAILER,
  BATON_PROJECT_TRAILER,
  formatCommitMessage,
  readFence,
  readTrailer,
} from './trailers.js';
import type { SpecialFileKind } from './worktree-files.js';

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
  createRemote?: boolean | undefined;
  /** The commit `baton/<project-id>` starts from; `null` starts from nothing. */
  baseCommit: string | null;
  /** Commit without running hooks (`--skip-hooks`). Default false. */
  skipHooks?: boolean | undefined;
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
  push?: PushRetryOptions | undefined;
  /** Longest wait for one fetch or push (ms). Default 120_000. */
  networkTimeoutMs?: number | undefined;
  /**
   * Asked right before every push; a returned reason refuses it (`push_failed` with that
   * message, no retry, the commit kept in the clone). A worker answers from the project's lease,
   * so a session that lost the project never pushes over its new holder's work.
   */
  mayPush?: (() => Promise<string | undefined>) | undefined;
  /**
   * The fencing token of the project lease the session holds (a worker's; `baton run` has none).
   * Every checkpoint commit carries it in a `Baton-Fence` trailer, and a push rejected because a
   * replaced session's late push landed (only commits of older fences) takes the branch back:
   * the stale tip is kept on `baton-kept/<project-id>/...` and replaced with
   * `--force-with-lease` on exactly that commit (`Checkpoint.replacedStale`). Anything else on
   * the branch (a person's commit, a newer fence) is never overwritten.
   */
  fence?: number | undefined;
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
  trailers?: ReadonlyArray<readonly [string, string]> | undefined;
  /** Free text between subject and trailers. */
  body?: string | undefined;
  /**
   * Keep retrying the push with backoff until it lands or the attempts run out (the end of a
   * session). Default false: one attempt, unless an earlier failure's backoff has not run out.
   */
  final?: boolean | undefined;
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
  hookOutput?: string | undefined;
  /** True when `head` is on the remote. */
  pushed: boolean;
  /** Why the push did not happen (`push_rejected`: not a fast-forward; never retried). */
  pushError?:
    | {
        code: Extract<WorkspaceErrorCode, 'push_rejected' | 'push_failed'>;
        message: string;
      }
    | undefined;
  /**
   * The push took the branch back from a replaced session's late push (`fence` option): that
   * stale tip is kept on the side branch `keptOn`.
   */
  replacedStale?: ReplacedStaleTip | undefined;
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

/**
 * A project's clone as named parts: `CloneSetup` prepares it, `CheckpointStaging` stages a
 * checkpoint, the commit runs the repository's hooks in the sandbox, `BranchPusher` pushes.
 */
class GitProjectWorkspace implements ProjectWorkspace {
  readonly projectId: string;
  readonly dir: string;
  readonly gitDir: string;
  readonly branch: string;
  readonly #options: ProjectWorkspaceOptions;
  readonly #git: CloneGit;
  readonly #setup: CloneSetup;
  readonly #staging: CheckpointStaging;
  readonly #pusher: BranchPusher;
  #head: string | null = null;
  #prepared = false;

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
    const networkTimeoutMs = options.networkTimeoutMs ?? 120_000;
    this.#git = new CloneGit(this.dir, this.gitDir, this.branch, options.remote);
    this.#setup = new CloneSetup(this.#git, {
      createRemote: options.createRemote,
      baseCommit: options.baseCommit,
      networkTimeoutMs,
      adopt: options.adopt,
    });
    this.#staging = new CheckpointStaging(this.#git, options.maxFileBytes);
    this.#pusher = new BranchPusher(this.#git, {
      ...DEFAULT_PUSH,
      ...options.push,
      networkTimeoutMs,
      mayPush: options.mayPush,
      fence:
        options.fence === undefined
          ? undefined
          : { projectId: options.projectId, fence: options.fence },
    });
  }

  async prepare(lastCheckpoint: string | null): Promise<PreparedWorkspace> {
    const { head, remoteHead, recovered } = await this.#setup.prepare(lastCheckpoint);
    this.#head = head;
    this.#pusher.reset(remoteHead);
    this.#prepared = true;
    return { branch: this.branch, head, remoteHead, recovered };
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
    const fence = this.#options.fence;
    const trailers: Array<readonly [string, string]> = [
      ...(request.trailers ?? []),
      [BATON_PROJECT_TRAILER, this.projectId],
      ...(fence === undefined ? [] : [[BATON_FENCE_TRAILER, String(fence)] as const]),
    ];
    let message = formatCommitMessage(request.subject, trailers, request.body);
    let { skipped, tooLarge, special, changed } = await this.#staging.stage(this.#head !== null);
    let commit: string | null = null;
    let hooks: CheckpointHooks = 'none';
    let hookOutput: string | undefined;
    if (changed) {
      const hooksDir = this.#options.skipHooks === true ? null : this.#setup.hooksDir;
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
        // Kept only while it still names the project and the fence: the branch's ownership
        // check and a rejected push's judgement read them.
        // Read as the readers read them (the last trailer of each, whole): a hook appending
        // `Baton-Fence: 70` under fence 7 would otherwise pass for a newer session's checkpoint.
        if (
          readTrailer(ran.message, BATON_PROJECT_TRAILER) === this.projectId &&
          (fence === undefined
            ? readTrailer(ran.message, BATON_FENCE_TRAILER) === null
            : readFence(ran.message) === fence)
        ) {
          message = ran.message;
        }
        // What a formatter in the hook changed is part of the commit, as with lint-staged.
        ({ skipped, tooLarge, special, changed } = await this.#staging.stage(this.#head !== null));
      }
      // A hook may have undone every change (a formatter): then there is nothing to commit.
      const committed = changed ? await this.#commit(message) : undefined;
      await ran?.finish(committed?.code === 0 && ran.outcome === 'passed');
      if (committed !== undefined && committed.code !== 0) {
        throw new WorkspaceError('git', `git commit failed: ${this.#git.message(committed)}`);
      }
      if (committed !== undefined) {
        commit = await this.#git.branchTip();
        this.#head = commit;
      }
    }
    const push = await this.#pusher.push(this.#head, request.final === true);
    return {
      commit,
      head: this.#head,
      message,
      skipped,
      ...(tooLarge.length === 0 ? {} : { tooLarge }),
      ...(special.length === 0 ? {} : { special }),
      hooks,
      hookOutput,
      pushed: push.pushed,
      pushError: push.error,
      replacedStale: push.replaced,
    };
  }

  #commit(message: string): Promise<GitOutput> {
    // A subject or body can quote what the model wrote; a pushed commit message is public.
    return this.#git.run([
      ...this.#setup.commitConfig,
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
}

function firstLine(text: string): string {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '') ?? '';
  return line.trim().slice(0, 120);
}
