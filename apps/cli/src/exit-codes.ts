/**
 * Exit codes of the `baton` command: one code per condition, whatever the verb (and the worker's
 * own entry point uses the same codes). Printed by `baton --help` and so in docs/cli.md.
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

/** One line per code, for `baton --help`: the only place the table is written out. */
export const EXIT_CODE_TABLE: string = [
  'Exit codes (the same for every verb):',
  '  0    ok: the command succeeded (for run: every feature passes)',
  '  1    unexpected error',
  '  2    bad arguments or configuration (one line on stderr says which)',
  '  3    features still failing when the session limit was reached',
  '  4    the --budget-usd budget is used up',
  '  5    the model refused to continue',
  '  6    a session failed (API errors after retries, or init wrote no checklist)',
  '  7    no such project, file or version',
  '  8    Redis does not answer (REDIS_CLUSTER_NODES, REDIS_URL, or redis://127.0.0.1:6379)',
  '  9    baton up found no Redis and no redis-server binary',
  '  10   baton run paused for no progress (--stall-after sessions in a row flipped no feature)',
  '  130  interrupted (Ctrl-C); a second Ctrl-C exits 130 at once',
].join('\n');

/** The line every verb's help ends with. */
export const EXIT_CODE_POINTER =
  'Exit codes: 0 ok; every other code is listed once in `baton --help` (docs/cli.md#exit-codes).';
