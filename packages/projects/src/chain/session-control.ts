import type { AbortReason } from '../chaining.js';

/**
 * How a running session is stopped: an abort ends it at once (cancel, shutdown, lost lease or
 * lock), a pause lets it run its end-of-session turn first. The first reason given wins; it is
 * what the chaining rules later see as `abortReason`.
 */
export class SessionControl {
  readonly #aborter = new AbortController();
  readonly #pauser = new AbortController();
  #reason: AbortReason | undefined;
  readonly #jobSignal: AbortSignal | undefined;
  readonly #onJobAbort = (): void => this.abort(toAbortReason(this.#jobSignal?.reason));

  /** `jobSignal`: BullMQ's signal for the job (`cancelJob`, `cancelAllJobs`), followed until `dispose`. */
  constructor(jobSignal: AbortSignal | undefined) {
    this.#jobSignal = jobSignal;
    jobSignal?.addEventListener('abort', this.#onJobAbort, { once: true });
    if (jobSignal?.aborted) this.#onJobAbort();
  }

  /** Aborts the session's run. */
  get signal(): AbortSignal {
    return this.#aborter.signal;
  }

  /** Asks the session to close its log and stop. */
  get pauseSignal(): AbortSignal {
    return this.#pauser.signal;
  }

  /** Why the session was stopped, if it was. */
  get abortReason(): AbortReason | undefined {
    return this.#reason;
  }

  /**
   * True when another worker may already be running this session again (this one lost its lease
   * or its job lock): the project's record is then no longer ours to write.
   */
  get abandoned(): boolean {
    return this.#reason === 'lease_lost' || this.#reason === 'lock_lost';
  }

  readonly abort = (reason: AbortReason): void => {
    if (this.#aborter.signal.aborted) return;
    this.#reason = reason;
    this.#aborter.abort(reason);
  };

  /** A pause is not an abort of the job: the session still runs its end-of-session turn. */
  readonly pause = (): void => {
    if (this.#aborter.signal.aborted || this.#pauser.signal.aborted) return;
    this.#reason = 'paused';
    this.#pauser.abort();
  };

  /**
   * What another process's change of the project's status means for the running session, read
   * here by a worker's lease heartbeat and `baton run`'s status watch alike: `cancelled` (`baton
   * cancel`, with --local too) aborts it, `paused` (`baton pause`) lets it run its end-of-session
   * turn first; any other status changes nothing. `status` as read (a `ProjectStatus`).
   */
  readonly followStatus = (status: string): void => {
    if (status === 'cancelled') this.abort('cancelled');
    else if (status === 'paused') this.pause();
  };

  /** Stops following the job's signal. */
  dispose(): void {
    this.#jobSignal?.removeEventListener('abort', this.#onJobAbort);
  }
}

function toAbortReason(reason: unknown): AbortReason {
  const text = typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : '';
  if (text === 'shutdown' || text === 'lease_lost' || text === 'lock_lost') return text;
  return 'cancelled';
}
