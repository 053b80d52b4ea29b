/** What stopped the working phase early. */
export type WorkAbortCause = 'cancelled' | 'abandoned' | 'paused' | 'wall_clock' | 'push_rejected';

/**
 * The caller's abort reasons that mean another worker may run the project now (its lease or job
 * lock was lost): the session is `abandoned` and asks the model nothing more.
 */
const ABANDONED_REASONS: ReadonlySet<unknown> = new Set(['lease_lost', 'lock_lost']);

/** Why the caller's signal aborted, as a cause of the working phase. */
function callerCause(signal: AbortSignal): WorkAbortCause {
  const reason: unknown = signal.reason;
  const text = reason instanceof Error ? reason.message : reason;
  return ABANDONED_REASONS.has(text) ? 'abandoned' : 'cancelled';
}

/**
 * The working phase's abort signal: aborted by the caller's signal (cancel) or pause signal, when
 * the wall clock runs out, or when the remote refuses a checkpoint (more work could not be
 * saved), remembering which came first.
 */
export class WorkSignal {
  readonly #controller = new AbortController();
  #cause: WorkAbortCause | undefined;
  readonly #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #caller: AbortSignal | undefined;
  readonly #pause: AbortSignal | undefined;
  readonly #onCallerAbort = () => this.#abort(callerCause(this.#caller as AbortSignal));
  readonly #onPause = () => this.#abort('paused');

  constructor(
    caller: AbortSignal | undefined,
    wallClockMs: number | undefined,
    pause?: AbortSignal,
  ) {
    this.#caller = caller;
    this.#pause = pause;
    if (caller?.aborted) this.#abort(callerCause(caller));
    else caller?.addEventListener('abort', this.#onCallerAbort, { once: true });
    if (pause?.aborted) this.#abort('paused');
    else pause?.addEventListener('abort', this.#onPause, { once: true });
    this.#timer =
      wallClockMs === undefined
        ? undefined
        : setTimeout(() => this.#abort('wall_clock'), wallClockMs);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get cause(): WorkAbortCause | undefined {
    return this.#cause;
  }

  /** Stops the timer and the caller listener. */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#caller?.removeEventListener('abort', this.#onCallerAbort);
    this.#pause?.removeEventListener('abort', this.#onPause);
  }

  /** Stops the working phase for `cause` (the first cause sticks). */
  abort(cause: WorkAbortCause): void {
    this.#abort(cause);
  }

  #abort(cause: WorkAbortCause): void {
    this.#cause ??= cause;
    this.#controller.abort();
  }
}
