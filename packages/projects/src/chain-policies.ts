/**
 * How soon a chain runs a project's next session and how it retries failed ones, one row per
 * entry point, side by side (docs/cli.md#chain-timings). The rules that read them are
 * `decideAfterSession`'s; only the timings differ, on purpose: a worker's delays spread load over
 * a queue, while `baton run` has a user waiting at the terminal.
 */
export interface ChainPolicy {
  /** Delay before the next session of a project (ms). */
  readonly chainDelayMs: number;
  /** Delay before retrying after a failed session (ms); doubles with each failure in a row. */
  readonly retryDelayMs: number;
  /** Failed sessions in a row before the project is `failed`. */
  readonly maxConsecutiveFailures: number;
}

export const CHAIN_POLICIES = {
  /** A worker's defaults: `BATON_CHAIN_DELAY_MS`, `BATON_RETRY_DELAY_MS`, `BATON_MAX_FAILURES`. */
  worker: { chainDelayMs: 1_000, retryDelayMs: 5_000, maxConsecutiveFailures: 3 },
  /** `baton run`: no queue between sessions; a retry backs off from one second. */
  local: { chainDelayMs: 0, retryDelayMs: 1_000, maxConsecutiveFailures: 3 },
} as const satisfies Record<string, ChainPolicy>;
