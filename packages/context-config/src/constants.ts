/** Beta needed by every context-management edit. */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';
/** Beta needed by the `compact_20260112` edit (the SDK names it after the edit's date). */
export const COMPACTION_BETA = 'compact-2026-01-12';

/** Name of the memory tool (`memory_20250818`); excluded from clearing by default. */
export const MEMORY_TOOL_NAME = 'memory';

/**
 * The API's documented defaults, written out in every resolved config so the request says
 * exactly what it asks for and the preview uses the same numbers.
 */
export const API_DEFAULTS = {
  clearToolUses: {
    trigger: { type: 'input_tokens', value: 100_000 },
    keep: { type: 'tool_uses', value: 3 },
    clear_at_least: null,
    exclude_tools: [] as string[],
    clear_tool_inputs: false,
  },
  clearThinking: { keep: { type: 'thinking_turns', value: 1 } },
  compaction: { trigger: { type: 'input_tokens', value: 150_000 }, pause_after_compaction: false },
} as const;

/** The API refuses a compaction trigger below this many input tokens. */
export const MIN_COMPACTION_TRIGGER_TOKENS = 50_000;
