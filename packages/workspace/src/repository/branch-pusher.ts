import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkspaceErrorCode } from '../errors.js';
import type { CloneGit } from './clone-git.js';
import { type GitOutput, remoteMessage } from './git.js';
import {
  judgeRemoteTip,
  keptBranch,
  type PushFence,
  type RemoteTipVerdict,
  type ReplacedStaleTip,
} from './stale-tip.js';

/** Why a push did not happen (`push_rejected`: not a fast-forward; never retried). */
export interface PushError {
  code: Extract<WorkspaceErrorCode, 'push_rejected' | 'push_failed'>;
  message: string;
}

/** How `BranchPusher` pushes. */
export interface BranchPusherOptions {
  /** Attempts of a final push. */
  attempts: number;
  /** Delay after the first failed push (ms), doubled after each further failure. */
  initialDelayMs: number;
  /** Longest delay between two attempts (ms). */
  maxDelayMs: number;
  /** Longest wait for one push (ms). */
  networkTimeoutMs: number;
  /** Asked right before every push; a returned reason refuses it. */
  mayPush?: (() => Promise<string | undefined>) | undefined;
  /**
   * The session's lease: with it, a push rejected because a replaced session's late push landed
   * (only commits of older fences) takes the branch back, keeping the stale tip on a side branch.
   * Without it (`baton run`), every rejection stands.
   */
  fence?: PushFence | undefined;
}

/** What one push did. */
export interface PushOutcome {
  pushed: boolean;
  error?: PushError | undefined;
  /** The push took the branch back from a replaced session's late push (kept on a side branch). */
  replaced?: ReplacedStaleTip | undefined;
}

/** One attempt: landed (perhaps over a stale tip), or why not. */
type Attempt =
  { ok: true; replaced?: ReplacedStaleTip | undefined } | { ok: false; error: PushError };

/** Rounds of fetch, judge, keep and replace before a rejection stands (each lost to a new push). */
const REPLACE_ROUNDS = 3;

/**
 * Pushes a clone's branch tip to its remote: what is on the remote, how many pushes failed in a
 * row, and when the next one may be tried. It never forces over work: the one non-fast-forward
 * push it makes replaces exactly a replaced session's stale tip (`--force-with-lease` on that
 * commit), after keeping that tip on a side branch (docs/decisions/stale-checkpoint-push.md).
 */
export class BranchPusher {
  readonly #git: CloneGit;
  readonly #options: BranchPusherOptions;
  #pushedHead: string | null = null;
  #pushFailures = 0;
  #nextPushAt = 0;
  #lastPushError: PushError | undefined;

  constructor(git: CloneGit, options: BranchPusherOptions) {
    this.#git = git;
    this.#options = options;
  }

  /** A prepared clone: the remote holds `remoteHead`, and no push failed yet. */
  reset(remoteHead: string | null): void {
    this.#pushedHead = remoteHead;
    this.#pushFailures = 0;
    this.#nextPushAt = 0;
    this.#lastPushError = undefined;
  }

  /**
   * Pushes `head` unless it is there already. `final`: retry with backoff until it lands or the
   * attempts run out; else one attempt, none while an earlier failure's backoff runs.
   */
  async push(head: string | null, final: boolean): Promise<PushOutcome> {
    if (head === null) return { pushed: false };
    if (head === this.#pushedHead) return { pushed: true };
    if (this.#lastPushError?.code === 'push_rejected') {
      return { pushed: false, error: this.#lastPushError };
    }
    const attempts = final ? this.#options.attempts : 1;
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      const wait = this.#nextPushAt - Date.now();
      if (wait > 0) {
        // Not yet: an earlier push failed and its backoff has not run out.
        if (!final) return { pushed: false, error: this.#lastPushError };
        await sleep(wait);
      }
      const refused = await this.#options.mayPush?.();
      if (refused !== undefined) {
        return { pushed: false, error: { code: 'push_failed', message: refused } };
      }
      const attempt = await this.#pushOnce(head);
      if (attempt.ok) {
        this.reset(head);
        return {
          pushed: true,
          replaced: attempt.replaced,
        };
      }
      const result = attempt.error;
      this.#lastPushError = result;
      if (result.code === 'push_rejected') return { pushed: false, error: result };
      this.#pushFailures += 1;
      this.#nextPushAt =
        Date.now() +
        Math.min(
          this.#options.maxDelayMs,
          this.#options.initialDelayMs * 2 ** (this.#pushFailures - 1),
        );
    }
    return { pushed: false, error: this.#lastPushError };
  }

  /** One push of `head` to the branch; a rejection is judged when the session holds a fence. */
  async #pushOnce(head: string): Promise<Attempt> {
    const error = await this.#pushRef(head, this.#git.branch, []);
    if (error === null) return { ok: true };
    if (error.code !== 'push_rejected' || this.#options.fence === undefined) {
      return { ok: false, error };
    }
    return this.#takeBack(head, this.#options.fence, error);
  }

  /**
   * A push was rejected: commits landed on the branch since this session last knew it. When they
   * are all a replaced session's (older fences), keep their tip on a side branch and replace
   * exactly that tip with `head`; anything else stands as the rejection, said precisely.
   */
  async #takeBack(head: string, fence: PushFence, rejected: PushError): Promise<Attempt> {
    const git = this.#git;
    let error = rejected;
    for (let round = 0; round < REPLACE_ROUNDS; round += 1) {
      let tip: string | null;
      try {
        tip = await git.fetchBranch(this.#options.networkTimeoutMs);
      } catch (fetchError) {
        const message = fetchError instanceof Error ? fetchError.message : String(fetchError);
        return { ok: false, error: { code: 'push_failed', message } };
      }
      // Deleted meanwhile: a plain push creates it again.
      if (tip === null) {
        const created = await this.#pushRef(head, git.branch, []);
        if (created === null) return { ok: true };
        error = created;
        continue;
      }
      const verdict = await judgeRemoteTip(git, fence, {
        base: this.#pushedHead,
        head,
        tip,
      });
      if (verdict.kind === 'foreign') {
        return {
          ok: false,
          error: { code: 'push_rejected', message: await this.#refuse(head, fence, verdict) },
        };
      }
      // The lease again: fetching and judging took time, and the session may be the stale one now.
      const refused = await this.#options.mayPush?.();
      if (refused !== undefined)
        return { ok: false, error: { code: 'push_failed', message: refused } };
      let replaced: ReplacedStaleTip | undefined;
      if (verdict.commits > 0) {
        const keptOn = keptBranch(fence.projectId, verdict.fence, tip);
        const kept = await this.#pushRef(tip, keptOn, []);
        if (kept !== null) {
          return {
            ok: false,
            error: {
              code: 'push_failed',
              message: `a replaced session's late push (${tip.slice(0, 12)}) is on ${git.branch}, and it could not be kept on ${keptOn} before taking the branch back: ${kept.message}`,
            },
          };
        }
        replaced = { tip, fence: verdict.fence, commits: verdict.commits, keptOn };
      }
      // Only exactly `tip` is replaced: a push landing meanwhile makes this fail, and is judged.
      const taken = await this.#pushRef(head, git.branch, [
        `--force-with-lease=refs/heads/${git.branch}:${tip}`,
      ]);
      if (taken === null) return { ok: true, replaced };
      error = taken;
      if (taken.code !== 'push_rejected') return { ok: false, error: taken };
    }
    return { ok: false, error };
  }

  /**
   * The rejection as the user reads it: what is on the branch, that it stays, and where this
   * session's work is. Still the project's holder, the session keeps its tip on a side branch
   * every clone can fetch (the next session starts from the branch and this clone moves on);
   * a session a newer one replaced pushes nothing.
   */
  async #refuse(
    head: string,
    fence: PushFence,
    verdict: Extract<RemoteTipVerdict, { kind: 'foreign' }>,
  ): Promise<string> {
    const git = this.#git;
    const refusal = `${git.remoteName} refused ${git.branch} as not a fast-forward: ${verdict.why}. Baton never overwrites it`;
    if (verdict.newer || (await this.#options.mayPush?.()) !== undefined) {
      return `${refusal}; this session's commits stay in the worker's clone.`;
    }
    const keptOn = keptBranch(fence.projectId, fence.fence, head);
    const kept = await this.#pushRef(head, keptOn, []);
    return kept === null
      ? `${refusal}; this session's work (${head.slice(0, 12)}) is kept on the branch ${keptOn}: merge it into ${git.branch} or delete it.`
      : `${refusal}; this session's commits stay in the worker's clone (keeping them on ${keptOn} failed: ${kept.message}).`;
  }

  /** Pushes `commit` to `refs/heads/<branch>` with `flags`; `null` when it landed. */
  async #pushRef(
    commit: string,
    branch: string,
    flags: readonly string[],
  ): Promise<PushError | null> {
    const git = this.#git;
    const output = await git.run(
      ['push', '--porcelain', ...flags, 'origin', `${commit}:refs/heads/${branch}`],
      this.#options.networkTimeoutMs,
    );
    return pushError(git, branch, output);
  }
}

/** What a `git push --porcelain` of `branch` said: `null` when the branch took the commit. */
function pushError(git: CloneGit, branch: string, output: GitOutput): PushError | null {
  const line = output.stdout.split('\n').find((text) => text.includes(`refs/heads/${branch}`));
  if (output.code === 0 && line !== undefined && !line.startsWith('!')) return null;
  if (line?.startsWith('!') === true) {
    const summary = line.split('\t').slice(2).join(' ').trim();
    if (/\[rejected\]/.test(summary)) {
      return {
        code: 'push_rejected',
        message: `${git.remoteName} refused ${branch} as not a fast-forward (${summary}); someone else changed the branch, and Baton never force-pushes.`,
      };
    }
    // A server-side hook (pre-receive, update) says why in `remote:` lines: the user needs them.
    const said = remoteMessage(output.stderr);
    return {
      code: 'push_failed',
      message: `${git.remoteName} refused the push of ${branch}: ${summary}${said === '' ? '' : ` (the remote said: ${said})`}`,
    };
  }
  return {
    code: 'push_failed',
    message: `cannot push ${branch} to ${git.remoteName}: ${git.message(output)}`,
  };
}
