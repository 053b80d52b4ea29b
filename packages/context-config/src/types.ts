import type { AnthropicBeta } from '@anthropic-ai/sdk/resources/beta/beta';
import type {
  BetaAllThinkingTurns,
  BetaClearThinking20251015Edit,
  BetaClearToolUses20250919Edit,
  BetaCompact20260112Edit,
  BetaContextManagementConfig,
  BetaInputTokensClearAtLeast,
  BetaInputTokensTrigger,
  BetaThinkingTurns,
  BetaToolUsesKeep,
  BetaToolUsesTrigger,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { CacheTtl, PromptCachePolicy } from './prompt-cache.js';

/** Named starting points; see docs/context-management.md for the intent of each. */
export type ContextPresetName = 'coding' | 'search-heavy' | 'long-horizon' | 'off';

/** Options of the `clear_tool_uses_20250919` edit, in the API's own field names. */
export interface ClearToolUsesInput {
  /** When clearing starts. Default `{ type: 'input_tokens', value: 100_000 }` (the API's). */
  trigger?: BetaInputTokensTrigger | BetaToolUsesTrigger;
  /** How many of the most recent tool uses survive a clearing. Default `{ type: 'tool_uses', value: 3 }`. */
  keep?: BetaToolUsesKeep;
  /** Clear only if at least this many tokens go; `null` = no minimum. Default `null`. */
  clear_at_least?: BetaInputTokensClearAtLeast | null;
  /** Tool names never cleared. `memory` is added unless `clearMemoryTool` is true. Default `[]`. */
  exclude_tools?: string[];
  /** Also blank the tool_use inputs: `true` for all tools, or a list of tool names. Default `false`. */
  clear_tool_inputs?: boolean | string[];
  /**
   * Baton option (not sent to the API): allow the memory tool's results to be cleared.
   * Default `false`: memory reads are the agent's hand-over notes and are cheap to keep.
   */
  clearMemoryTool?: boolean;
}

/** Options of the `clear_thinking_20251015` edit. */
export interface ClearThinkingInput {
  /** Thinking of how many recent assistant turns to keep. Default `{ type: 'thinking_turns', value: 1 }`. */
  keep?: BetaThinkingTurns | BetaAllThinkingTurns | 'all';
}

/** Options of the `compact_20260112` edit (server-side compaction). */
export interface CompactionInput {
  /** When to compact. Default `{ type: 'input_tokens', value: 150_000 }`; the API's minimum is 50 000. */
  trigger?: BetaInputTokensTrigger;
  /** Extra instructions for the summary. Default: none (the server's own prompt). */
  instructions?: string;
  /** Stop after compacting and return the compaction block. Default `false`. */
  pause_after_compaction?: boolean;
}

/** Options of prompt caching (Baton's breakpoints; see `withCacheBreakpoints`). */
export interface PromptCacheInput {
  /** TTL of the stable prefix (tools + system): `'5m'` or `'1h'`. Default `'5m'`. */
  prefixTtl?: CacheTtl;
}

/**
 * What a user writes (in code, in `baton.config.json` under `context`, or through env vars).
 * Unknown keys are errors. A group set to `false` turns that edit off; an object turns it on and
 * overrides the preset's fields one by one.
 */
export interface ContextConfigInput {
  /** Starting point. Default `'coding'`. */
  preset?: ContextPresetName;
  clearToolUses?: false | ClearToolUsesInput;
  clearThinking?: false | ClearThinkingInput;
  compaction?: false | CompactionInput;
  /** Cache breakpoints on every request. `false` sends none. Default on, `prefixTtl: '5m'`. */
  promptCache?: false | PromptCacheInput;
}

/** One edit as the Messages API takes it. */
export type ContextManagementEdit =
  BetaClearToolUses20250919Edit | BetaClearThinking20251015Edit | BetaCompact20260112Edit;

/** The request-side `context_management` value this package produces (edits always present). */
export type ContextManagement = BetaContextManagementConfig & { edits: ContextManagementEdit[] };

/** Ready to send: spread `betas` and `context_management` into `client.beta.messages.create`. */
export interface ResolvedContextConfig {
  /** The preset used, or `'custom'` when any group changed it. */
  preset: ContextPresetName | 'custom';
  /** Beta names the request needs, e.g. `['context-management-2025-06-27']`; `[]` when off. */
  betas: AnthropicBeta[];
  /** `undefined` when no edit is on (preset `off`): send no `context_management` at all. */
  context_management: ContextManagement | undefined;
  /** How requests place cache breakpoints; `null` when prompt caching is off. */
  promptCache: PromptCachePolicy | null;
}
