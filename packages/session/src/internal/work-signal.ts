/** What stopped the working phase early. */
export type WorkAbortCause = 'cancelled' | 'wall_clock' | 'push_rejected';

/**
 * The working phase's abort signal: aborted by the caller's signal, when the wall clock runs
 * out, or when the remote refuses a checkpoint (more work could not be saved), remembering
 * which came first.
 */
export class WorkSignal {
  readonly #controller = new AbortController();
  #cause: WorkAbortCause | undefined;
  readonly #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #caller: AbortSignal | undefined;
  readonly #onCallerAbort = () => this.#abort('cancelled');

  constructor(caller: AbortSignal | undefined, wallClockMs: number | undefined) {
    this.#caller = caller;
    if (caller?.aborted) this.#abort('cancelled');
    else caller?.addEventListener('abort', this.#onCallerAbort, { once: true });
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
