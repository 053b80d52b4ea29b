import type { AnthropicBeta } from '@anthropic-ai/sdk/resources/beta/beta';
import type {
  BetaClearThinking20251015Edit,
  BetaClearToolUses20250919Edit,
  BetaCompact20260112Edit,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  API_DEFAULTS,
  COMPACTION_BETA,
  CONTEXT_MANAGEMENT_BETA,
  MEMORY_TOOL_NAME,
  MIN_COMPACTION_TRIGGER_TOKENS,
} from '../constants.js';
import type { ContextConfigIssue } from '../errors.js';
import { CONTEXT_PRESETS, DEFAULT_CONTEXT_PRESET } from '../presets.js';
import type {
  ClearThinkingInput,
  ClearToolUsesInput,
  CompactionInput,
  ContextConfigInput,
  ContextManagementEdit,
  ResolvedContextConfig,
} from '../types.js';
import { formatPath } from './issues.js';

const DEFAULT_PREFIX_TTL = '5m';

type Group = 'clearToolUses' | 'clearThinking' | 'compaction' | 'promptCache';
const GROUPS: readonly Group[] = ['clearToolUses', 'clearThinking', 'compaction', 'promptCache'];
/** The groups that make `context_management` edits (a changed one makes the preset `custom`). */
const EDIT_GROUPS: readonly Group[] = ['clearToolUses', 'clearThinking', 'compaction'];

/**
 * Layers a later input over an earlier one: `preset` is replaced, a group set to `false` turns
 * the edit off, a group object is merged field by field over the earlier group (so a later
 * layer that sets any field of a group turns it back on).
 */
export function mergeInputs(
  lower: ContextConfigInput,
  upper: ContextConfigInput,
): ContextConfigInput {
  const result: ContextConfigInput = { ...lower };
  if (upper.preset !== undefined) result.preset = upper.preset;
  for (const group of GROUPS) {
    const value = upper[group];
    if (value === undefined) continue;
    const previous = lower[group];
    // The three groups have different shapes; merging is the same for each.
    (result as Record<Group, unknown>)[group] =
      value === false
        ? false
        : { ...(previous === false || previous === undefined ? {} : previous), ...value };
  }
  return result;
}

/** Checks rules that involve more than one field (the schema checks each field alone). */
export function checkContradictions(
  input: ContextConfigInput,
  prefix: readonly PropertyKey[],
  source: string,
): ContextConfigIssue[] {
  const issues: ContextConfigIssue[] = [];
  const at = (...path: PropertyKey[]) => formatPath([...prefix, ...path]);
  const effective = mergeInputs(
    CONTEXT_PRESETS[input.preset ?? DEFAULT_CONTEXT_PRESET].config,
    input,
  );

  const tools = effective.clearToolUses;
  if (tools !== undefined && tools !== false) {
    const trigger = tools.trigger ?? API_DEFAULTS.clearToolUses.trigger;
    const keep = tools.keep ?? API_DEFAULTS.clearToolUses.keep;
    if (trigger.type === 'tool_uses' && keep.value > trigger.value) {
      // Point at the field the user wrote: keep if they set it, else the trigger that now sits
      // below the preset's keep.
      const userKeep = input.clearToolUses !== false && input.clearToolUses?.keep !== undefined;
      issues.push(
        userKeep
          ? {
              path: at('clearToolUses', 'keep', 'value'),
              message:
                `must not be greater than clearToolUses.trigger.value (${trigger.value}) when the ` +
                `trigger counts tool uses: clearing would start at ${trigger.value} tool uses and ` +
                `then have to keep ${keep.value}`,
              source,
            }
          : {
              path: at('clearToolUses', 'trigger', 'value'),
              message:
                `must not be less than clearToolUses.keep.value (${keep.value}, from the preset) ` +
                `when the trigger counts tool uses: clearing would start at ${trigger.value} tool ` +
                `uses and then have to keep ${keep.value}; set keep too`,
              source,
            },
      );
    }
    const excluded = tools.exclude_tools ?? [];
    if (tools.clearMemoryTool === true) {
      excluded.forEach((name, index) => {
        if (name === MEMORY_TOOL_NAME) {
          issues.push({
            path: at('clearToolUses', 'exclude_tools', index),
            message: `lists "${MEMORY_TOOL_NAME}" but clearToolUses.clearMemoryTool is true; remove one of them`,
            source,
          });
        }
      });
    }
    if (Array.isArray(tools.clear_tool_inputs)) {
      const neverCleared = new Set(excluded);
      if (tools.clearMemoryTool !== true) neverCleared.add(MEMORY_TOOL_NAME);
      tools.clear_tool_inputs.forEach((name, index) => {
        if (!neverCleared.has(name)) return;
        issues.push({
          path: at('clearToolUses', 'clear_tool_inputs', index),
          message:
            name === MEMORY_TOOL_NAME && !excluded.includes(name)
              ? `"${name}" is excluded from clearing unless clearToolUses.clearMemoryTool is true, so its inputs are never cleared`
              : `"${name}" is also in clearToolUses.exclude_tools, so its inputs are never cleared`,
          source,
        });
      });
    }
  }

  const compaction = effective.compaction;
  if (compaction !== undefined && compaction !== false && compaction.trigger !== undefined) {
    if (compaction.trigger.value < MIN_COMPACTION_TRIGGER_TOKENS) {
      issues.push({
        path: at('compaction', 'trigger', 'value'),
        message: `must be at least ${MIN_COMPACTION_TRIGGER_TOKENS} input tokens (the API's minimum for compaction; got ${compaction.trigger.value})`,
        source,
      });
    }
  }
  return issues;
}

function clearToolUsesEdit(group: ClearToolUsesInput): BetaClearToolUses20250919Edit {
  const excluded = [...new Set(group.exclude_tools ?? [])];
  if (group.clearMemoryTool !== true && !excluded.includes(MEMORY_TOOL_NAME)) {
    excluded.push(MEMORY_TOOL_NAME);
  }
  const edit: BetaClearToolUses20250919Edit = {
    type: 'clear_tool_uses_20250919',
    trigger: { ...(group.trigger ?? API_DEFAULTS.clearToolUses.trigger) },
    keep: { ...(group.keep ?? API_DEFAULTS.clearToolUses.keep) },
    exclude_tools: excluded,
    clear_tool_inputs: Array.isArray(group.clear_tool_inputs)
      ? [...new Set(group.clear_tool_inputs)]
      : (group.clear_tool_inputs ?? API_DEFAULTS.clearToolUses.clear_tool_inputs),
  };
  // Omitted rather than sent as null: "no minimum" is the API's own default.
  if (group.clear_at_least !== undefined && group.clear_at_least !== null) {
    edit.clear_at_least = { ...group.clear_at_least };
  }
  return edit;
}

function clearThinkingEdit(group: ClearThinkingInput): BetaClearThinking20251015Edit {
  const keep = group.keep ?? API_DEFAULTS.clearThinking.keep;
  return { type: 'clear_thinking_20251015', keep: typeof keep === 'string' ? keep : { ...keep } };
}

function compactEdit(group: CompactionInput): BetaCompact20260112Edit {
  const edit: BetaCompact20260112Edit = {
    type: 'compact_20260112',
    trigger: { ...(group.trigger ?? API_DEFAULTS.compaction.trigger) },
    pause_after_compaction:
      group.pause_after_compaction ?? API_DEFAULTS.compaction.pause_after_compaction,
  };
  if (group.instructions !== undefined) edit.instructions = group.instructions;
  return edit;
}

/** Builds the request-side config from an already validated input. */
export function buildResolved(input: ContextConfigInput): ResolvedContextConfig {
  const presetName = input.preset ?? DEFAULT_CONTEXT_PRESET;
  const effective = mergeInputs(CONTEXT_PRESETS[presetName].config, input);
  const custom = EDIT_GROUPS.some((group) => input[group] !== undefined);

  const edits: ContextManagementEdit[] = [];
  // The API requires clear_thinking to come first when it is combined with other edits.
  if (effective.clearThinking) edits.push(clearThinkingEdit(effective.clearThinking));
  if (effective.clearToolUses) edits.push(clearToolUsesEdit(effective.clearToolUses));
  if (effective.compaction) edits.push(compactEdit(effective.compaction));

  const betas: AnthropicBeta[] = [];
  if (edits.length > 0) betas.push(CONTEXT_MANAGEMENT_BETA);
  if (effective.compaction) betas.push(COMPACTION_BETA);

  return {
    preset: custom ? 'custom' : presetName,
    betas,
    context_management: edits.length > 0 ? { edits } : undefined,
    promptCache: effective.promptCache
      ? { prefixTtl: effective.promptCache.prefixTtl ?? DEFAULT_PREFIX_TTL }
      : null,
  };
}
