import type { BetaUsage } from '@anthropic-ai/sdk/resources/beta/messages/messages';

/** USD per million tokens for one model. */
export interface ModelPrice {
  /** Uncached input tokens. */
  inputPerMTok: number;
  /** Output tokens (thinking included). */
  outputPerMTok: number;
  /** Cache writes with the default 5-minute TTL (1.25 x input on Anthropic's list). */
  cacheWritePerMTok: number;
  /** Cache reads (0.1 x input on Anthropic's list). */
  cacheReadPerMTok: number;
  /** Cache writes with the 1-hour TTL. Default: 2 x `inputPerMTok`. */
  cacheWrite1hPerMTok?: number;
}

/**
 * Prices by model id. A key matches a model id exactly or as a prefix (the longest matching key
 * wins, so `claude-opus-4-1` beats `claude-opus-4`); `default` is used when nothing matches.
 */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Anthropic's list mostly keeps these ratios: cache write 1.25x and cache read 0.1x input. */
function price(
  input: number,
  output: number,
  write = input * 1.25,
  read = input * 0.1,
): ModelPrice {
  const round = (value: number) => Math.round(value * 1_000_000) / 1_000_000;
  return {
    inputPerMTok: input,
    outputPerMTok: output,
    cacheWritePerMTok: round(write),
    cacheReadPerMTok: round(read),
  };
}

const SONNET = price(3, 15);

/** The simulator's model: what it costs is nothing. */
export const SIM_MODEL = 'sim';

/**
 * The simulator under a price: it runs exactly as `sim` and is billed at Sonnet's list prices,
 * so that budgets (`--budget-usd`, `maxUsd`) and cost reports can be tested offline.
 */
export const PRICED_SIM_MODEL = 'sim-sonnet';

/**
 * The model ids that mean "the built-in simulator" to `baton run` and the worker: they run
 * without `ANTHROPIC_API_KEY`, and are never mistaken for a real model.
 */
export function isSimulatedModel(model: string | undefined): boolean {
  return model === SIM_MODEL || model === PRICED_SIM_MODEL;
}

/**
 * Anthropic list prices (USD per MTok) as known when this table was written. They are
 * estimates for budgets and dashboards, not a bill: override them with `prices` when they change.
 * Unknown models cost like Sonnet (`default`). The simulator's `sim` model (and any `sim-...` id
 * without an entry of its own) costs 0; `sim-sonnet` is the simulator at Sonnet's prices.
 */
export const DEFAULT_PRICES: PriceTable = {
  // Opus 4.5 and later (and unversioned future Opus ids) are priced lower than Opus 4 / 4.1.
  'claude-opus': price(5, 25),
  'claude-opus-4': price(15, 75),
  'claude-opus-4-0': price(15, 75),
  'claude-opus-4-1': price(15, 75),
  'claude-opus-4-5': price(5, 25),
  'claude-opus-4-6': price(5, 25),
  'claude-opus-4-7': price(5, 25),
  'claude-opus-4-8': price(5, 25),
  'claude-3-opus': price(15, 75),
  'claude-sonnet': SONNET,
  'claude-3-5-sonnet': SONNET,
  'claude-3-7-sonnet': SONNET,
  'claude-haiku': price(1, 5),
  'claude-haiku-4-5': price(1, 5),
  'claude-3-5-haiku': price(0.8, 4),
  'claude-3-haiku': price(0.25, 1.25, 0.3, 0.03),
  [SIM_MODEL]: price(0, 0, 0, 0),
  [PRICED_SIM_MODEL]: SONNET,
  default: SONNET,
};

/** The price entry used for `model`: exact key, else longest prefix key, else `default`. */
export function priceForModel(model: string, prices: PriceTable = DEFAULT_PRICES): ModelPrice {
  const table: PriceTable = prices === DEFAULT_PRICES ? prices : { ...DEFAULT_PRICES, ...prices };
  const exact = table[model];
  if (exact !== undefined) return exact;
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (
      key !== 'default' &&
      model.startsWith(key) &&
      (best === undefined || key.length > best.length)
    ) {
      best = key;
    }
  }
  return (best !== undefined ? table[best] : undefined) ?? (table.default as ModelPrice);
}

/** The usage fields that cost money; every SDK `BetaUsage` has them. */
export type BillableUsage = Pick<BetaUsage, 'input_tokens' | 'output_tokens'> &
  Partial<
    Pick<BetaUsage, 'cache_creation_input_tokens' | 'cache_read_input_tokens' | 'cache_creation'>
  >;

/**
 * Estimated cost in USD of one response's usage. `prices` is merged over `DEFAULT_PRICES`.
 * Cache writes use the TTL breakdown in `usage.cache_creation` when present (1-hour writes at
 * `cacheWrite1hPerMTok`), else all of `cache_creation_input_tokens` at the 5-minute price.
 */
export function estimateCostUsd(model: string, usage: BillableUsage, prices?: PriceTable): number {
  const entry = priceForModel(model, prices);
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const breakdown = usage.cache_creation;
  let write5m = cacheWrite;
  let write1h = 0;
  if (breakdown !== undefined && breakdown !== null) {
    write1h = breakdown.ephemeral_1h_input_tokens;
    write5m = Math.max(0, cacheWrite - write1h);
  }
  const perToken = 1 / 1_000_000;
  return (
    (usage.input_tokens * entry.inputPerMTok +
      usage.output_tokens * entry.outputPerMTok +
      (usage.cache_read_input_tokens ?? 0) * entry.cacheReadPerMTok +
      write5m * entry.cacheWritePerMTok +
      write1h * (entry.cacheWrite1hPerMTok ?? entry.inputPerMTok * 2)) *
    perToken
  );
}
