// The codes live in @baton/core so the worker's entry point exits with the same ones.
export { EXIT_CODES, type ExitCodeName } from '@baton/core';

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
  '  130  baton run cancelled: Ctrl-C (a second Ctrl-C exits at once) or `baton cancel --local`',
  'Every failure is one line on stderr: "baton: <what was wrong>".',
].join('\n');

/** The line every verb's help ends with. */
export const EXIT_CODE_POINTER =
  'Exit codes: 0 ok; every other code is listed once in `baton --help` (docs/cli.md#exit-codes).';
