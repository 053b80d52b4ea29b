/**
 * What the token and cost figures of `projects`, `status`, `run` and `logs` mean; appended to
 * their `--help` (and so to docs/cli.md, generated from it).
 */
export const COST_HELP =
  '\nTokens and cost: "in" and TOKENS count every input token (uncached + read from the\n' +
  'prompt cache + written to it); "cached"/CACHED is the share of input read from the\n' +
  'cache (billed at 0.1x input; cache writes at 1.25x for 5 minutes, 2x for 1 hour);\n' +
  'USD is the estimate from the price list in docs/context-management.md.';
