/**
 * Exit codes of Baton's processes: one code per condition, whatever the entry point (every `baton`
 * verb and the worker's own `node apps/worker/dist/main.js`), so a supervisor reads one table.
 * Printed by `baton --help` and so in docs/cli.md.
 */
export const EXIT_CODES = {
  /** Every feature passes (or the command succeeded). */
  ok: 0,
  /** An unexpected error. */
  internal: 1,
  /** A mistake in the arguments: one line on stderr says which. */
  usage: 2,
  /** The run stopped with features still failing (the session limit was reached). */
  featuresRemaining: 3,
  /** The `--budget-usd` budget is used up. */
  budgetExhausted: 4,
  /** The model refused to continue. */
  refused: 5,
  /** A session failed (API errors after retries, or the init wrote no checklist). */
  sessionFailed: 6,
  /** No such project (on Redis, or under BATON_HOME with --local), file or version. */
  notFound: 7,
  /** Redis does not answer (REDIS_CLUSTER_NODES, REDIS_URL, or the default redis://127.0.0.1:6379). */
  redisUnreachable: 8,
  /** `baton up` found no Redis and no redis-server binary to start one. */
  redisServerMissing: 9,
  /** `baton run` paused the project: `--stall-after` sessions in a row flipped no feature (reason `no_progress`). */
  noProgress: 10,
  /** Ctrl-C: the session ended cleanly; run `baton run --project ID` to continue. */
  cancelled: 130,
} as const;

export type ExitCodeName = keyof typeof EXIT_CODES;
