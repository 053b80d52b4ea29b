import type {
  BetaClearThinking20251015EditResponse,
  BetaClearToolUses20250919EditResponse,
  BetaContextManagementResponse,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { type BillableUsage, type PriceTable, estimateCostUsd } from './prices.js';

/** Running totals of one session (or any sequence of turns). */
export interface UsageTotals {
  turns: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** Sum of `cleared_input_tokens` over every applied edit. */
  clearedInputTokens: number;
  clearedToolUses: number;
  clearedThinkingTurns: number;
  /** Estimated, from the price table. */
  costUsd: number;
}

/** The usage of one turn in Baton's names (null fields from the API read as 0). */
export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
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
  costUsd: number;
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
  /** Adds one response's usage and applied edits to the totals and returns what it added. */
  recordTurn(response: TurnResponse): TurnAccounting;
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
    clearedInputTokens: 0,
    clearedToolUses: 0,
    clearedThinkingTurns: 0,
    costUsd: 0,
  };
}

/** Reads one response into Baton's accounting, without keeping totals. */
export function accountTurn(
  response: TurnResponse,
  model: string,
  prices?: PriceTable,
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
  return {
    usage: {
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
      cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
    },
    appliedEdits,
    clearedInputTokens,
    clearedToolUses,
    clearedThinkingTurns,
    costUsd: estimateCostUsd(model, usage, prices),
  };
}

/** Keeps running totals over the turns of a session. */
export function createUsageAccumulator(options: UsageAccumulatorOptions): UsageAccumulator {
  const totals = emptyUsageTotals();
  return {
    recordTurn(response) {
      const turn = accountTurn(response, options.model, options.prices);
      totals.turns += 1;
      totals.inputTokens += turn.usage.inputTokens;
      totals.outputTokens += turn.usage.outputTokens;
      totals.cacheReadInputTokens += turn.usage.cacheReadInputTokens;
      totals.cacheCreationInputTokens += turn.usage.cacheCreationInputTokens;
      totals.clearedInputTokens += turn.clearedInputTokens;
      totals.clearedToolUses += turn.clearedToolUses;
      totals.clearedThinkingTurns += turn.clearedThinkingTurns;
      totals.costUsd += turn.costUsd;
      return turn;
    },
    totals() {
      return { ...totals };
    },
  };
}
