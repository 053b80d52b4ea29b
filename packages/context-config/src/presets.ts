import type { ContextConfigInput, ContextPresetName } from './types.js';

/** A preset: the groups it turns on, and why (shown in docs and by `baton` tooling). */
export interface ContextPreset {
  intent: string;
  config: Required<Omit<ContextConfigInput, 'preset'>>;
}

/**
 * Presets. Every one excludes the memory tool from clearing (added at resolution), none turns on
 * `clearThinking` (it only matters when the request enables extended thinking, which Baton
 * sessions do not by default; when it is on, any `keep` but `'all'` invalidates the cache), and
 * every clearing sets `clear_at_least` to half its trigger: a clear rewrites at most the
 * `trigger - cleared` tokens it keeps, so it pays for its cache rewrite within
 * `11.5 x (trigger - cleared) / cleared` <= 11.5 requests (`clearingCacheCost`,
 * docs/context-management.md). Every preset caches (5-minute prefix).
 */
export const CONTEXT_PRESETS: Readonly<Record<ContextPresetName, ContextPreset>> = {
  coding: {
    intent:
      'Default for Baton sessions. A coding agent re-reads files and re-runs commands, so old ' +
      'bash output and file views go stale once the code changes. Clear them from 80k input ' +
      'tokens, keep the last 5 tool uses (the current edit/test loop), and only clear when at ' +
      'least 40k tokens go, so each cache rewrite pays for itself within about 12 requests.',
    config: {
      clearToolUses: {
        trigger: { type: 'input_tokens', value: 80_000 },
        keep: { type: 'tool_uses', value: 5 },
        clear_at_least: { type: 'input_tokens', value: 40_000 },
        clear_tool_inputs: false,
      },
      clearThinking: false,
      compaction: false,
      promptCache: { prefixTtl: '5m' },
    },
  },
  'search-heavy': {
    intent:
      'For research-style sessions where tool results (searches, fetched pages, large listings) ' +
      'are big and read once. Clear early, from 40k input tokens, keep only the last 3 tool ' +
      'uses, and clear at least 20k tokens at a time.',
    config: {
      clearToolUses: {
        trigger: { type: 'input_tokens', value: 40_000 },
        keep: { type: 'tool_uses', value: 3 },
        clear_at_least: { type: 'input_tokens', value: 20_000 },
        clear_tool_inputs: false,
      },
      clearThinking: false,
      compaction: false,
      promptCache: { prefixTtl: '5m' },
    },
  },
  'long-horizon': {
    intent:
      'For sessions meant to run far beyond one context window. Tool-result clearing does the ' +
      'routine work (from 100k tokens, keep 6, at least 50k at a time); server-side compaction ' +
      'at 150k tokens summarises the rest when clearing is not enough.',
    config: {
      clearToolUses: {
        trigger: { type: 'input_tokens', value: 100_000 },
        keep: { type: 'tool_uses', value: 6 },
        clear_at_least: { type: 'input_tokens', value: 50_000 },
        clear_tool_inputs: false,
      },
      clearThinking: false,
      compaction: {
        trigger: { type: 'input_tokens', value: 150_000 },
        pause_after_compaction: false,
      },
      promptCache: { prefixTtl: '5m' },
    },
  },
  off: {
    intent:
      'No context management: the request carries no context_management and no beta (prompt ' +
      'caching stays on). For short sessions, for measuring a baseline, or for models without ' +
      'the beta.',
    config: {
      clearToolUses: false,
      clearThinking: false,
      compaction: false,
      promptCache: { prefixTtl: '5m' },
    },
  },
};

/** The preset used when none is named. */
export const DEFAULT_CONTEXT_PRESET: ContextPresetName = 'coding';
