/**
 * The working phase's abort signal: aborted by the caller's signal or when the wall clock runs
 * out, remembering which came first.
 */
export class WorkSignal {
  readonly #controller = new AbortController();
  #cause: 'cancelled' | 'wall_clock' | undefined;
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

  get cause(): 'cancelled' | 'wall_clock' | undefined {
    return this.#cause;
  }

  /** Stops the timer and the caller listener. */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#caller?.removeEventListener('abort', this.#onCallerAbort);
  }

  #abort(cause: 'cancelled' | 'wall_clock'): void {
    this.#cause ??= cause;
    this.#controller.abort();
  }
}
