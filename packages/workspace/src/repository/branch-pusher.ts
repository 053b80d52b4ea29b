import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkspaceErrorCode } from '../errors.js';
import type { CloneGit } from './clone-git.js';
import { redactUrlCredentials } from './git.js';

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
}

/**
 * Pushes a clone's branch tip to its remote, never forcing: what is on the remote, how many
 * pushes failed in a row, and when the next one may be tried.
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
  async push(head: string | null, final: boolean): Promise<{ pushed: boolean; error?: PushError }> {
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
        this.reset(head);
        return { pushed: true };
      }
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
    return { pushed: false, ...(this.#lastPushError ? { error: this.#lastPushError } : {}) };
  }

  /** One push of `head` to the branch; `null` when it landed. */
  async #pushOnce(head: string): Promise<PushError | null> {
    const git = this.#git;
    const { branch } = git;
    const output = await git.run(
      ['push', '--porcelain', 'origin', `${head}:refs/heads/${branch}`],
      this.#options.networkTimeoutMs,
    );
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
