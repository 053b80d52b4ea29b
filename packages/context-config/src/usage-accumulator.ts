import type {
  BetaClearThinking20251015EditResponse,
  BetaClearToolUses20250919EditResponse,
  BetaContextManagementResponse,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { type BillableUsage, type PriceTable, estimateCostUsd, priceForModel } from './prices.js';
import { clearingCacheCost } from './prompt-cache.js';

/** Running totals of one session (or any sequence of turns). */
export interface UsageTotals {
  turns: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  /** All cache writes (`cacheWrite5mInputTokens + cacheWrite1hInputTokens`). */
  cacheCreationInputTokens: number;
  /** Cache writes with the 5-minute TTL (1.25x input). */
  cacheWrite5mInputTokens: number;
  /** Cache writes with the 1-hour TTL (2x input). */
  cacheWrite1hInputTokens: number;
  /** Sum of `cleared_input_tokens` over every applied edit. */
  clearedInputTokens: number;
  clearedToolUses: number;
  clearedThinkingTurns: number;
  /** Tokens that applied edits made the API write to the cache again instead of reading them. */
  cacheInvalidatedInputTokens: number;
  /** What those rewrites cost beyond the reads they replaced, in USD. */
  cacheInvalidationCostUsd: number;
  /** Estimated, from the price table. */
  costUsd: number;
  /** What the same tokens would cost with no caching (every input token at the input price). */
  uncachedCostUsd: number;
}

/** The usage of one turn in Baton's names (null fields from the API read as 0). */
export interface TurnUsage {
  /** Uncached input: the tokens after the last cache hit that were not written either. */
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** From `usage.cache_creation`; without that breakdown every write counts as 5-minute. */
  cacheWrite5mInputTokens: number;
  cacheWrite1hInputTokens: number;
}

/** The cache cost of one turn's applied edits (see `clearingCacheCost`). */
export interface CacheInvalidation {
  /** Tokens of the previous request's cached prefix, minus the cleared ones, written again. */
  rewrittenInputTokens: number;
  /** `rewritten x (5-minute write - read)` in USD. */
  costUsd: number;
  /** Requests until the clear has paid for itself. */
  breakEvenRequests: number;
}

export type AppliedEdit =
  BetaClearToolUses20250919EditResponse | BetaClearThinking20251015EditResponse;

/** What one turn added. */
export interface TurnAccounting {
  usage: TurnUsage;
  /** The response's `context_management.applied_edits` (`[]` when none). */
  appliedEdits: AppliedEdit[];
  clearedInputTokens: number;
  clearedToolUses: number;
  clearedThinkingTurns: number;
  /** Set on a turn with applied edits that had a cached prefix before it; else `null`. */
  cacheInvalidation: CacheInvalidation | null;
  costUsd: number;
  /** This turn's tokens priced with no caching. */
  uncachedCostUsd: number;
}

/**
 * The part of a response the accumulator reads. A `BetaMessage` is one; so is a message
 * assembled from a stream, or a simulator's JSON reply.
 */
export interface TurnResponse {
  usage: BillableUsage;
  context_management?: BetaContextManagementResponse | null;
}

export interface UsageAccumulatorOptions {
  /** Model id used for prices (e.g. `claude-sonnet-4-5`, or `sim`). */
  model: string;
  /** Entries merged over `DEFAULT_PRICES`. Default: none. */
  prices?: PriceTable;
}

export interface UsageAccumulator {
  /**
   * Adds one response's usage and applied edits to the totals and returns what it added, priced
   * as `model` (default: the accumulator's `model`; a session that fell back to another model
   * pays that model's prices from then on).
   */
  recordTurn(response: TurnResponse, model?: string): TurnAccounting;
  /** A copy of the running totals. */
  totals(): UsageTotals;
}

/** Zeroed totals, e.g. for a session that failed before its first turn. */
export function emptyUsageTotals(): UsageTotals {
  return {
    turns: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    cacheWrite5mInputTokens: 0,
    cacheWrite1hInputTokens: 0,
    clearedInputTokens: 0,
    clearedToolUses: 0,
    clearedThinkingTurns: 0,
    cacheInvalidatedInputTokens: 0,
    cacheInvalidationCostUsd: 0,
    costUsd: 0,
    uncachedCostUsd: 0,
  };
}

/** Every input token of the turns: uncached + read from the cache + written to it. */
export function totalInputTokens(
  usage: Pick<UsageTotals, 'inputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens'>,
): number {
  return usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
}

/** Share of all input tokens (uncached + read + written) that were read from the cache, 0..1. */
export function cacheHitRate(
  usage: Pick<UsageTotals, 'inputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens'>,
): number {
  const total = totalInputTokens(usage);
  return total === 0 ? 0 : usage.cacheReadInputTokens / total;
}

/**
 * Reads one response into Baton's accounting, without keeping totals. `previous` (the usage of
 * the request before) lets a turn with applied edits say what the clear cost in cache rewrites:
 * what the previous request had cached, less the cleared tokens, less what this one read.
 */
export function accountTurn(
  response: TurnResponse,
  model: string,
  prices?: PriceTable,
  previous?: TurnUsage,
): TurnAccounting {
  const usage = response.usage;
  const appliedEdits = [...(response.context_management?.applied_edits ?? [])];
  let clearedInputTokens = 0;
  let clearedToolUses = 0;
  let clearedThinkingTurns = 0;
  for (const edit of appliedEdits) {
    clearedInputTokens += edit.cleared_input_tokens;
    if (edit.type === 'clear_tool_uses_20250919') clearedToolUses += edit.cleared_tool_uses;
    else if (edit.type === 'clear_thinking_20251015')
      clearedThinkingTurns += edit.cleared_thinking_turns;
  }
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheCreation = usage.cache_creation_input_tokens ?? 0;
  const write1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const turnUsage: TurnUsage = {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cacheReadInputTokens: cacheRead,
    cacheCreationInputTokens: cacheCreation,
    cacheWrite5mInputTokens: Math.max(0, cacheCreation - write1h),
    cacheWrite1hInputTokens: write1h,
  };
  let cacheInvalidation: CacheInvalidation | null = null;
  const previousCached =
    previous === undefined ? 0 : previous.cacheReadInputTokens + previous.cacheCreationInputTokens;
  if (appliedEdits.length > 0 && previousCached > 0) {
    const cost = clearingCacheCost({
      model,
      prices,
      rewrittenInputTokens: previousCached - clearedInputTokens - cacheRead,
      clearedInputTokens,
    });
    cacheInvalidation = {
      rewrittenInputTokens: cost.rewrittenInputTokens,
      costUsd: cost.invalidationCostUsd,
      breakEvenRequests: cost.breakEvenRequests,
    };
  }
  const price = priceForModel(model, prices);
  return {
    usage: turnUsage,
    appliedEdits,
    clearedInputTokens,
    clearedToolUses,
    clearedThinkingTurns,
    cacheInvalidation,
    costUsd: estimateCostUsd(model, usage, prices),
    uncachedCostUsd:
      ((usage.input_tokens + cacheRead + cacheCreation) * price.inputPerMTok +
        usage.output_tokens * price.outputPerMTok) /
      1_000_000,
  };
}

/** Keeps running totals over the turns of a session. */
export function createUsageAccumulator(options: UsageAccumulatorOptions): UsageAccumulator {
  const totals = emptyUsageTotals();
  let previous: TurnUsage | undefined;
  return {
    recordTurn(response, model = options.model) {
      const turn = accountTurn(response, model, options.prices, previous);
      previous = turn.usage;
      totals.turns += 1;
      totals.inputTokens += turn.usage.inputTokens;
      totals.outputTokens += turn.usage.outputTokens;
      totals.cacheReadInputTokens += turn.usage.cacheReadInputTokens;
      totals.cacheCreationInputTokens += turn.usage.cacheCreationInputTokens;
      totals.cacheWrite5mInputTokens += turn.usage.cacheWrite5mInputTokens;
      totals.cacheWrite1hInputTokens += turn.usage.cacheWrite1hInputTokens;
      totals.clearedInputTokens += turn.clearedInputTokens;
      totals.clearedToolUses += turn.clearedToolUses;
      totals.clearedThinkingTurns += turn.clearedThinkingTurns;
      totals.cacheInvalidatedInputTokens += turn.cacheInvalidation?.rewrittenInputTokens ?? 0;
      totals.cacheInvalidationCostUsd += turn.cacheInvalidation?.costUsd ?? 0;
      totals.costUsd += turn.costUsd;
      totals.uncachedCostUsd += turn.uncachedCostUsd;
      return turn;
    },
    totals() {
      return { ...totals };
    },
  };
}
