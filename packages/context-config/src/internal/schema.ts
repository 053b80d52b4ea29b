import { z } from 'zod';

/*
 * Zod schemas for the user-facing input. Every object is strict (unknown keys are errors) and
 * every message names the rule, because these messages are what a user reads when a config file
 * is wrong.
 */

function strict<Shape extends z.ZodRawShape>(shape: Shape) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown key; allowed keys here: ${allowed}`
        : 'must be an object',
  });
}

function count(minimum: number) {
  return z
    .number({ error: 'must be a number' })
    .int({ error: 'must be a whole number' })
    .min(minimum, {
      error: (issue) =>
        minimum === 0
          ? `must not be negative (got ${String(issue.input)})`
          : `must be at least ${minimum} (got ${String(issue.input)})`,
    });
}

const toolName = z
  .string({ error: 'must be a tool name (string)' })
  .min(1, { error: 'must not be empty' });

const inputTokensTrigger = strict({ type: z.literal('input_tokens'), value: count(1) });
const toolUsesTrigger = strict({ type: z.literal('tool_uses'), value: count(1) });

const trigger = z.discriminatedUnion('type', [inputTokensTrigger, toolUsesTrigger], {
  error: 'must be { "type": "input_tokens" | "tool_uses", "value": <whole number >= 1> }',
});

const clearToolUses = strict({
  trigger: trigger.optional(),
  keep: strict({
    type: z.literal('tool_uses', { error: 'must be "tool_uses"' }),
    value: count(0),
  }).optional(),
  clear_at_least: strict({
    type: z.literal('input_tokens', { error: 'must be "input_tokens"' }),
    value: count(0),
  })
    .nullable()
    .optional(),
  exclude_tools: z.array(toolName, { error: 'must be a list of tool names' }).optional(),
  clear_tool_inputs: z
    .union([z.boolean(), z.array(toolName)], {
      error: 'must be true, false or a list of tool names',
    })
    .optional(),
  clearMemoryTool: z.boolean({ error: 'must be true or false' }).optional(),
});

const thinkingKeep = z.union(
  [
    z.literal('all'),
    z.discriminatedUnion('type', [
      strict({ type: z.literal('all') }),
      strict({ type: z.literal('thinking_turns'), value: count(1) }),
    ]),
  ],
  {
    error:
      'must be "all", { "type": "all" } or { "type": "thinking_turns", "value": <whole number >= 1> }',
  },
);

const clearThinking = strict({ keep: thinkingKeep.optional() });

const compaction = strict({
  trigger: strict({
    type: z.literal('input_tokens', { error: 'must be "input_tokens"' }),
    value: count(1),
  }).optional(),
  instructions: z
    .string({ error: 'must be a string' })
    .refine((value) => value.trim() !== '', { error: 'must not be empty (omit it instead)' })
    .optional(),
  pause_after_compaction: z.boolean({ error: 'must be true or false' }).optional(),
});

const promptCache = strict({
  prefixTtl: z.enum(['5m', '1h'], { error: 'must be "5m" or "1h"' }).optional(),
});

const off = z.literal(false);

export const PRESET_NAMES = ['coding', 'search-heavy', 'long-horizon', 'off'] as const;

export const contextConfigInputSchema = strict({
  preset: z.enum(PRESET_NAMES, { error: `must be one of: ${PRESET_NAMES.join(', ')}` }).optional(),
  clearToolUses: z.union([off, clearToolUses], { error: 'must be false or an object' }).optional(),
  clearThinking: z.union([off, clearThinking], { error: 'must be false or an object' }).optional(),
  compaction: z.union([off, compaction], { error: 'must be false or an object' }).optional(),
  promptCache: z.union([off, promptCache], { error: 'must be false or an object' }).optional(),
});
