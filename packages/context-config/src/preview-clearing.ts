import type {
  BetaContentBlockParam,
  BetaContextManagementConfig,
  BetaMessageParam,
  BetaTextBlockParam,
  BetaToolResultBlockParam,
  BetaToolUseBlockParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { API_DEFAULTS } from './constants.js';
import { estimateInputTokens, estimateMessageTokens, estimateTokens } from './estimate-tokens.js';
import type { PriceTable } from './prices.js';
import { clearingCacheCost } from './prompt-cache.js';
import type { ContextManagementEdit, ResolvedContextConfig } from './types.js';

/**
 * What a cleared tool result's content becomes. The API replaces cleared results with a short
 * placeholder telling the model the result was removed; its exact wording is not documented, so
 * this is ours.
 */
export const CLEARED_TOOL_RESULT_TEXT = '[tool result cleared by context management]';

/** One applied edit, shaped like an entry of the API's `context_management.applied_edits`. */
export type PreviewAppliedEdit =
  | { type: 'clear_tool_uses_20250919'; cleared_tool_uses: number; cleared_input_tokens: number }
  | {
      type: 'clear_thinking_20251015';
      cleared_thinking_turns: number;
      cleared_input_tokens: number;
    };

/** What one applied edit costs in prompt-cache terms (see `clearingCacheCost`). */
export interface PreviewCacheInvalidation {
  type: PreviewAppliedEdit['type'];
  /** Index of the first message the edit changed: the cached prefix ends before it. */
  firstChangedMessage: number;
  /** Tokens from that message to the end (after every edit), written again instead of read. */
  rewrittenInputTokens: number;
  /** `rewritten x (5-minute write - read)` in USD. */
  invalidationCostUsd: number;
  /** What each later request saves by not reading this edit's cleared tokens, in USD. */
  savedPerRequestUsd: number;
  /** Requests after the clear until it has paid for itself. */
  breakEvenRequests: number;
}

export interface ClearingPreview {
  /** The history as the model would see it after clearing (input messages are never mutated). */
  messages: BetaMessageParam[];
  /** `estimateInputTokens` of system + tools + messages before clearing. */
  inputTokensBefore: number;
  /** The same estimate after clearing; `inputTokensBefore` minus every `cleared_input_tokens`. */
  inputTokensAfter: number;
  /** Edits that changed something, in request order (the API omits edits that did nothing). */
  appliedEdits: PreviewAppliedEdit[];
  /**
   * One entry per applied edit, in the same order: what it costs in cache rewrites, assuming the
   * whole prompt before it was cached. The request's rewrite is the earliest edit's.
   */
  cacheInvalidation: PreviewCacheInvalidation[];
  /** `id`s of the tool_use blocks whose results (and maybe inputs) were cleared, oldest first. */
  clearedToolUseIds: string[];
  /** Edit types present in the config that the preview does not emulate (`compact_20260112`). */
  notEmulated: Array<'compact_20260112'>;
  /** Whether a compaction edit's trigger is reached by `inputTokensAfter` (it is not emulated). */
  compactionWouldTrigger: boolean;
}

export interface PreviewClearingOptions {
  messages: readonly BetaMessageParam[];
  /** A resolved config, a raw request `context_management`, or `undefined` (nothing to do). */
  config: ResolvedContextConfig | BetaContextManagementConfig | null | undefined;
  system?: string | readonly BetaTextBlockParam[] | undefined;
  tools?: readonly unknown[] | undefined;
  /** Model id whose prices `cacheInvalidation` uses. Default `default` (Sonnet's list). */
  model?: string | undefined;
  /** Price entries merged over `DEFAULT_PRICES`. Default none. */
  prices?: PriceTable | undefined;
}

type ConversationMessage = Extract<BetaMessageParam, { role: 'user' | 'assistant' }>;

/** The content blocks of a user or assistant message, or undefined for anything else. */
function conversationBlocks(
  message: BetaMessageParam | undefined,
): BetaContentBlockParam[] | undefined {
  if (message === undefined || message.role === 'system' || typeof message.content === 'string') {
    return undefined;
  }
  return message.content;
}

interface BlockLocation {
  messageIndex: number;
  blockIndex: number;
}

interface ToolUseEntry extends BlockLocation {
  id: string;
  name: string;
}

function editsOf(config: PreviewClearingOptions['config']): ContextManagementEdit[] {
  if (config === undefined || config === null) return [];
  const management: BetaContextManagementConfig | null | undefined =
    'context_management' in config || 'betas' in config
      ? (config as ResolvedContextConfig).context_management
      : (config as BetaContextManagementConfig);
  return management?.edits ?? [];
}

function isThinking(block: BetaContentBlockParam): boolean {
  return block.type === 'thinking' || block.type === 'redacted_thinking';
}

/**
 * Emulates the API's server-side clearing on a history: the same rules (edits in request order;
 * clear_thinking keeps the thinking of the last N assistant turns that have any; clear_tool_uses
 * fires when the estimated input reaches `trigger`, keeps the `keep` most recent tool uses,
 * never clears `exclude_tools`, clears nothing unless at least `clear_at_least` tokens go, and
 * blanks inputs per `clear_tool_inputs`). Pure and linear in the history's size: the model
 * simulator calls it on every request.
 *
 * Differences from the API, on purpose: token counts are `estimateInputTokens`, not the real
 * tokenizer; a "turn" is one assistant message; `compact_20260112` is reported, not emulated.
 */
export function previewClearing(options: PreviewClearingOptions): ClearingPreview {
  const source = options.messages;
  const working: BetaMessageParam[] = source.slice();
  const copied = new Set<number>();
  // Copy-on-write: only messages that change are copied, the rest are shared with the input.
  // Only user and assistant messages are ever edited; their content is BetaContentBlockParam[].
  const blocksOf = (messageIndex: number): BetaContentBlockParam[] => {
    const message = working[messageIndex] as ConversationMessage;
    if (!copied.has(messageIndex)) {
      const content = Array.isArray(message.content) ? message.content.slice() : [];
      working[messageIndex] = { ...message, content };
      copied.add(messageIndex);
    }
    return (working[messageIndex] as ConversationMessage).content as BetaContentBlockParam[];
  };

  const inputTokensBefore = estimateInputTokens({
    messages: source,
    system: options.system,
    tools: options.tools,
  });
  let tokensNow = inputTokensBefore;
  const appliedEdits: PreviewAppliedEdit[] = [];
  const firstChanged: number[] = [];
  const clearedToolUseIds: string[] = [];
  const notEmulated: Array<'compact_20260112'> = [];
  let compactionTrigger: number | undefined;

  for (const edit of editsOf(options.config)) {
    if (edit.type === 'clear_thinking_20251015') {
      const cleared = clearThinking(working, edit.keep, blocksOf);
      if (cleared.turns > 0) {
        tokensNow -= cleared.tokens;
        firstChanged.push(cleared.firstMessage);
        appliedEdits.push({
          type: 'clear_thinking_20251015',
          cleared_thinking_turns: cleared.turns,
          cleared_input_tokens: cleared.tokens,
        });
      }
    } else if (edit.type === 'clear_tool_uses_20250919') {
      const cleared = clearToolUses(working, edit, tokensNow, blocksOf);
      if (cleared.ids.length > 0) {
        tokensNow -= cleared.tokens;
        firstChanged.push(cleared.firstMessage);
        clearedToolUseIds.push(...cleared.ids);
        appliedEdits.push({
          type: 'clear_tool_uses_20250919',
          cleared_tool_uses: cleared.ids.length,
          cleared_input_tokens: cleared.tokens,
        });
      }
    } else if (edit.type === 'compact_20260112') {
      notEmulated.push('compact_20260112');
      compactionTrigger = edit.trigger?.value ?? API_DEFAULTS.compaction.trigger.value;
    }
  }

  const cacheInvalidation = appliedEdits.map((edit, index): PreviewCacheInvalidation => {
    const first = firstChanged[index] ?? 0;
    let rewritten = 0;
    for (let message = first; message < working.length; message += 1)
      rewritten += estimateMessageTokens(working[message] as BetaMessageParam);
    const cost = clearingCacheCost({
      model: options.model ?? 'default',
      prices: options.prices,
      rewrittenInputTokens: rewritten,
      clearedInputTokens: edit.cleared_input_tokens,
    });
    return {
      type: edit.type,
      firstChangedMessage: first,
      rewrittenInputTokens: rewritten,
      invalidationCostUsd: cost.invalidationCostUsd,
      savedPerRequestUsd: cost.savedPerRequestUsd,
      breakEvenRequests: cost.breakEvenRequests,
    };
  });

  return {
    messages: working,
    inputTokensBefore,
    inputTokensAfter: tokensNow,
    appliedEdits,
    cacheInvalidation,
    clearedToolUseIds,
    notEmulated,
    compactionWouldTrigger: compactionTrigger !== undefined && tokensNow >= compactionTrigger,
  };
}

function clearThinking(
  messages: readonly BetaMessageParam[],
  keep: Extract<ContextManagementEdit, { type: 'clear_thinking_20251015' }>['keep'],
  blocksOf: (messageIndex: number) => BetaContentBlockParam[],
): { turns: number; tokens: number; firstMessage: number } {
  if (keep === 'all' || keep?.type === 'all') return { turns: 0, tokens: 0, firstMessage: 0 };
  const keepTurns = keep?.value ?? API_DEFAULTS.clearThinking.keep.value;

  const turnsWithThinking: number[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'assistant' && conversationBlocks(message)?.some(isThinking) === true) {
      turnsWithThinking.push(index);
    }
  });
  const toClear = turnsWithThinking.slice(0, Math.max(0, turnsWithThinking.length - keepTurns));
  let tokens = 0;
  for (const messageIndex of toClear) {
    const blocks = blocksOf(messageIndex);
    const kept: BetaContentBlockParam[] = [];
    for (const block of blocks) {
      if (isThinking(block)) tokens += estimateTokens(block);
      else kept.push(block);
    }
    blocks.splice(0, blocks.length, ...kept);
  }
  return { turns: toClear.length, tokens, firstMessage: toClear[0] ?? 0 };
}

function clearToolUses(
  messages: readonly BetaMessageParam[],
  edit: Extract<ContextManagementEdit, { type: 'clear_tool_uses_20250919' }>,
  tokensNow: number,
  blocksOf: (messageIndex: number) => BetaContentBlockParam[],
): { ids: string[]; tokens: number; firstMessage: number } {
  const none = { ids: [], tokens: 0, firstMessage: 0 };
  const toolUses: ToolUseEntry[] = [];
  const results = new Map<string, BlockLocation>();
  messages.forEach((message, messageIndex) => {
    conversationBlocks(message)?.forEach((block, blockIndex) => {
      if (block.type === 'tool_use' && message.role === 'assistant') {
        toolUses.push({ id: block.id, name: block.name, messageIndex, blockIndex });
      } else if (block.type === 'tool_result' && message.role === 'user') {
        results.set(block.tool_use_id, { messageIndex, blockIndex });
      }
    });
  });

  const trigger = edit.trigger ?? API_DEFAULTS.clearToolUses.trigger;
  const reached =
    trigger.type === 'tool_uses' ? toolUses.length >= trigger.value : tokensNow >= trigger.value;
  if (!reached) return none;

  const keep = edit.keep?.value ?? API_DEFAULTS.clearToolUses.keep.value;
  const excluded = new Set(edit.exclude_tools ?? []);
  const inputsOption = edit.clear_tool_inputs ?? false;
  const clearsInput = (name: string) =>
    inputsOption === true || (Array.isArray(inputsOption) && inputsOption.includes(name));

  // Plan first, apply only if clear_at_least is met: the API leaves the context untouched when
  // it cannot free the minimum.
  const plan: Array<{ entry: ToolUseEntry; result?: BlockLocation; clearInput: boolean }> = [];
  let tokens = 0;
  for (const entry of toolUses.slice(0, Math.max(0, toolUses.length - keep))) {
    if (excluded.has(entry.name)) continue;
    let saved = 0;
    const result = results.get(entry.id);
    if (result !== undefined) {
      const block = conversationBlocks(messages[result.messageIndex])?.[
        result.blockIndex
      ] as BetaToolResultBlockParam;
      if (block.content !== CLEARED_TOOL_RESULT_TEXT) {
        saved += estimateTokens(block) - estimateTokens(clearedResult(block));
      }
    }
    let clearInput = false;
    if (clearsInput(entry.name)) {
      const block = conversationBlocks(messages[entry.messageIndex])?.[
        entry.blockIndex
      ] as BetaToolUseBlockParam;
      const after = estimateTokens(block) - estimateTokens(clearedToolUse(block));
      if (after > 0) {
        saved += after;
        clearInput = true;
      }
    }
    if (saved <= 0) continue;
    tokens += saved;
    plan.push(result === undefined ? { entry, clearInput } : { entry, result, clearInput });
  }
  const minimum = edit.clear_at_least?.value ?? 0;
  if (plan.length === 0 || tokens < minimum) return none;

  for (const step of plan) {
    if (step.result !== undefined) {
      const blocks = blocksOf(step.result.messageIndex);
      blocks[step.result.blockIndex] = clearedResult(
        blocks[step.result.blockIndex] as BetaToolResultBlockParam,
      );
    }
    if (step.clearInput) {
      const blocks = blocksOf(step.entry.messageIndex);
      blocks[step.entry.blockIndex] = clearedToolUse(
        blocks[step.entry.blockIndex] as BetaToolUseBlockParam,
      );
    }
  }
  const firstMessage = Math.min(
    ...plan.map((step) =>
      step.clearInput || step.result === undefined
        ? step.entry.messageIndex
        : step.result.messageIndex,
    ),
  );
  return { ids: plan.map((step) => step.entry.id), tokens, firstMessage };
}

function clearedResult(block: BetaToolResultBlockParam): BetaToolResultBlockParam {
  return { ...block, content: CLEARED_TOOL_RESULT_TEXT };
}

function clearedToolUse(block: BetaToolUseBlockParam): BetaToolUseBlockParam {
  return { ...block, input: {} };
}
