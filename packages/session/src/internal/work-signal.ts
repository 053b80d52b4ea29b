/** What stopped the working phase early. */
export type WorkAbortCause = 'cancelled' | 'paused' | 'wall_clock' | 'push_rejected';

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
  readonly #onCallerAbort = () => this.#abort('cancelled');
  readonly #onPause = () => this.#abort('paused');

  constructor(
    caller: AbortSignal | undefined,
    wallClockMs: number | undefined,
    pause?: AbortSignal,
  ) {
    this.#caller = caller;
    this.#pause = pause;
    if (caller?.aborted) this.#abort('cancelled');
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
