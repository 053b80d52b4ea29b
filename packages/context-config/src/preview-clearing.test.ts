import type {
  BetaContentBlockParam,
  BetaMessageParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expect, it } from 'vitest';
import { defineContextConfig } from './define-context-config.js';
import { estimateInputTokens, estimateTokens } from './estimate-tokens.js';
import { CLEARED_TOOL_RESULT_TEXT, previewClearing } from './preview-clearing.js';
import type { ClearToolUsesInput } from './types.js';

/** A history of `count` tool rounds; tool names cycle through `names`; each result is `size` chars. */
function history(count: number, names: string[] = ['bash'], size = 400): BetaMessageParam[] {
  const messages: BetaMessageParam[] = [{ role: 'user', content: 'Build the feature.' }];
  for (let index = 0; index < count; index += 1) {
    const id = `toolu_${index}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${index}.` },
        {
          type: 'tool_use',
          id,
          name: names[index % names.length] ?? 'bash',
          input: { command: `step ${index}` },
        },
      ],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: 'x'.repeat(size) }],
    });
  }
  return messages;
}

function toolsOnly(options: ClearToolUsesInput) {
  return defineContextConfig({ preset: 'off', clearToolUses: options });
}

function resultText(messages: BetaMessageParam[], id: string): unknown {
  for (const message of messages) {
    if (typeof message.content === 'string' || message.content === undefined) continue;
    for (const block of message.content as BetaContentBlockParam[]) {
      if (block.type === 'tool_result' && block.tool_use_id === id) return block.content;
    }
  }
  return undefined;
}

describe('clear_tool_uses preview', () => {
  it('trigger not reached: nothing is cleared and the history is returned as is', () => {
    const messages = history(6);
    const preview = previewClearing({
      messages,
      config: toolsOnly({ trigger: { type: 'input_tokens', value: 1_000_000 } }),
    });
    expect(preview.appliedEdits).toEqual([]);
    expect(preview.clearedToolUseIds).toEqual([]);
    expect(preview.inputTokensAfter).toBe(preview.inputTokensBefore);
    expect(preview.messages).toEqual(messages);
  });

  it('keeps the N most recent tool uses and clears the older ones with a placeholder', () => {
    const messages = history(6);
    const preview = previewClearing({
      messages,
      config: toolsOnly({
        trigger: { type: 'input_tokens', value: 100 },
        keep: { type: 'tool_uses', value: 2 },
      }),
    });
    expect(preview.clearedToolUseIds).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3']);
    expect(resultText(preview.messages, 'toolu_0')).toBe(CLEARED_TOOL_RESULT_TEXT);
    expect(resultText(preview.messages, 'toolu_4')).toBe('x'.repeat(400));
    expect(resultText(preview.messages, 'toolu_5')).toBe('x'.repeat(400));
    const perResult =
      estimateTokens({ type: 'tool_result', tool_use_id: 'toolu_0', content: 'x'.repeat(400) }) -
      estimateTokens({
        type: 'tool_result',
        tool_use_id: 'toolu_0',
        content: CLEARED_TOOL_RESULT_TEXT,
      });
    expect(preview.appliedEdits).toEqual([
      {
        type: 'clear_tool_uses_20250919',
        cleared_tool_uses: 4,
        cleared_input_tokens: 4 * perResult,
      },
    ]);
    expect(preview.inputTokensAfter).toBe(preview.inputTokensBefore - 4 * perResult);
    expect(preview.inputTokensAfter).toBe(estimateInputTokens({ messages: preview.messages }));
  });

  it('does not mutate the input history', () => {
    const messages = history(4);
    const snapshot = structuredClone(messages);
    previewClearing({
      messages,
      config: toolsOnly({
        trigger: { type: 'input_tokens', value: 1 },
        keep: { type: 'tool_uses', value: 0 },
        clear_tool_inputs: true,
      }),
    });
    expect(messages).toEqual(snapshot);
  });

  it('a tool-use trigger fires on the number of tool uses', () => {
    const config = toolsOnly({
      trigger: { type: 'tool_uses', value: 4 },
      keep: { type: 'tool_uses', value: 1 },
    });
    expect(previewClearing({ messages: history(3), config }).clearedToolUseIds).toEqual([]);
    expect(previewClearing({ messages: history(4), config }).clearedToolUseIds).toEqual([
      'toolu_0',
      'toolu_1',
      'toolu_2',
    ]);
  });

  it('the input-token trigger counts system and tools too', () => {
    const messages = history(3);
    const messageTokens = estimateInputTokens({ messages });
    const config = toolsOnly({
      trigger: { type: 'input_tokens', value: messageTokens + 50 },
      keep: { type: 'tool_uses', value: 0 },
    });
    expect(previewClearing({ messages, config }).clearedToolUseIds).toEqual([]);
    const preview = previewClearing({ messages, config, system: 's'.repeat(400) });
    expect(preview.inputTokensBefore).toBe(messageTokens + 100);
    expect(preview.clearedToolUseIds).toHaveLength(3);
  });

  it('exclude_tools and the memory tool are never cleared, but still count as recent', () => {
    const messages = history(6, ['bash', 'memory', 'web_search']);
    const preview = previewClearing({
      messages,
      config: toolsOnly({
        trigger: { type: 'input_tokens', value: 1 },
        keep: { type: 'tool_uses', value: 1 },
        exclude_tools: ['web_search'],
      }),
    });
    // toolu_0 bash, 1 memory, 2 web_search, 3 bash, 4 memory, 5 web_search (kept as most recent)
    expect(preview.clearedToolUseIds).toEqual(['toolu_0', 'toolu_3']);
    expect(resultText(preview.messages, 'toolu_1')).toBe('x'.repeat(400));
    expect(resultText(preview.messages, 'toolu_2')).toBe('x'.repeat(400));
  });

  it('clearMemoryTool lets the memory tool be cleared', () => {
    const preview = previewClearing({
      messages: history(3, ['memory']),
      config: toolsOnly({
        trigger: { type: 'input_tokens', value: 1 },
        keep: { type: 'tool_uses', value: 1 },
        clearMemoryTool: true,
      }),
    });
    expect(preview.clearedToolUseIds).toEqual(['toolu_0', 'toolu_1']);
  });

  it('clear_at_least: nothing is cleared unless the minimum can be freed', () => {
    const messages = history(4);
    const clearable =
      previewClearing({
        messages,
        config: toolsOnly({
          trigger: { type: 'input_tokens', value: 1 },
          keep: { type: 'tool_uses', value: 2 },
        }),
      }).appliedEdits[0]?.cleared_input_tokens ?? 0;
    expect(clearable).toBeGreaterThan(0);
    const atLeast = (value: number) =>
      previewClearing({
        messages,
        config: toolsOnly({
          trigger: { type: 'input_tokens', value: 1 },
          keep: { type: 'tool_uses', value: 2 },
          clear_at_least: { type: 'input_tokens', value },
        }),
      });
    const blocked = atLeast(clearable + 1);
    expect(blocked.appliedEdits).toEqual([]);
    expect(blocked.messages).toEqual(messages);
    expect(blocked.inputTokensAfter).toBe(blocked.inputTokensBefore);
    expect(atLeast(clearable).appliedEdits[0]?.cleared_input_tokens).toBe(clearable);
  });

  it('clear_tool_inputs true blanks the inputs of cleared tool uses only', () => {
    const preview = previewClearing({
      messages: history(3),
      config: toolsOnly({
        trigger: { type: 'input_tokens', value: 1 },
        keep: { type: 'tool_uses', value: 1 },
        clear_tool_inputs: true,
      }),
    });
    const inputs = preview.messages
      .filter((message) => message.role === 'assistant')
      .map((message) =>
        (message.content as BetaContentBlockParam[]).find((block) => block.type === 'tool_use'),
      )
      .map((block) => (block?.type === 'tool_use' ? block.input : undefined));
    expect(inputs).toEqual([{}, {}, { command: 'step 2' }]);
  });

  it('clear_tool_inputs as a list blanks only the named tools', () => {
    const preview = previewClearing({
      messages: history(4, ['bash', 'str_replace_based_edit_tool']),
      config: toolsOnly({
        trigger: { type: 'input_tokens', value: 1 },
        keep: { type: 'tool_uses', value: 0 },
        clear_tool_inputs: ['str_replace_based_edit_tool'],
      }),
    });
    const inputs = preview.messages
      .filter((message) => message.role === 'assistant')
      .map((message) =>
        (message.content as BetaContentBlockParam[]).find((block) => block.type === 'tool_use'),
      )
      .map((block) => (block?.type === 'tool_use' ? block.input : undefined));
    expect(inputs).toEqual([{ command: 'step 0' }, {}, { command: 'step 2' }, {}]);
  });

  it('an already cleared result frees nothing and is not counted again', () => {
    const config = toolsOnly({
      trigger: { type: 'input_tokens', value: 1 },
      keep: { type: 'tool_uses', value: 1 },
    });
    const first = previewClearing({ messages: history(3), config });
    const second = previewClearing({ messages: first.messages, config });
    expect(second.appliedEdits).toEqual([]);
  });

  it('a result already shorter than the placeholder is left as it is and not counted', () => {
    const messages = history(3, ['bash'], 4);
    const preview = previewClearing({
      messages,
      config: toolsOnly({
        trigger: { type: 'input_tokens', value: 1 },
        keep: { type: 'tool_uses', value: 1 },
      }),
    });
    expect(preview.appliedEdits).toEqual([]);
    expect(preview.messages).toEqual(messages);
  });

  it('a tool use without a result yet is counted and can only have its input cleared', () => {
    const messages = history(2);
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_pending', name: 'bash', input: { command: 'ls' } }],
    });
    const preview = previewClearing({
      messages,
      config: toolsOnly({
        trigger: { type: 'input_tokens', value: 1 },
        keep: { type: 'tool_uses', value: 1 },
      }),
    });
    expect(preview.clearedToolUseIds).toEqual(['toolu_0', 'toolu_1']);
  });

  it('accepts a raw request context_management and applies the API defaults', () => {
    const messages = history(5, ['memory', 'bash']);
    const preview = previewClearing({
      messages,
      config: {
        edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 1 } }],
      },
    });
    // API defaults: keep 3, no exclusions (the memory exclusion is Baton's, added by defineContextConfig).
    expect(preview.clearedToolUseIds).toEqual(['toolu_0', 'toolu_1']);
  });

  it('no config, or preset off, clears nothing', () => {
    const messages = history(5);
    for (const config of [undefined, null, defineContextConfig({ preset: 'off' }), {}]) {
      const preview = previewClearing({ messages, config });
      expect(preview.appliedEdits).toEqual([]);
      expect(preview.messages).toEqual(messages);
    }
  });
});

describe('clear_thinking preview', () => {
  function thinkingHistory(turns: number): BetaMessageParam[] {
    const messages: BetaMessageParam[] = [];
    for (let index = 0; index < turns; index += 1) {
      messages.push({ role: 'user', content: `question ${index}` });
      messages.push({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 't'.repeat(200), signature: `sig${index}` },
          { type: 'text', text: `answer ${index}` },
        ],
      });
    }
    return messages;
  }

  it('keeps the thinking of the last N assistant turns', () => {
    const preview = previewClearing({
      messages: thinkingHistory(4),
      config: defineContextConfig({
        preset: 'off',
        clearThinking: { keep: { type: 'thinking_turns', value: 2 } },
      }),
    });
    const withThinking = preview.messages.map(
      (message) =>
        message.role === 'assistant' &&
        (message.content as BetaContentBlockParam[]).some((block) => block.type === 'thinking'),
    );
    expect(withThinking).toEqual([false, false, false, false, false, true, false, true]);
    const cleared =
      2 * estimateTokens({ type: 'thinking', thinking: 't'.repeat(200), signature: 'sig0' });
    expect(preview.appliedEdits).toEqual([
      { type: 'clear_thinking_20251015', cleared_thinking_turns: 2, cleared_input_tokens: cleared },
    ]);
  });

  it('the default keeps one turn and keep "all" clears nothing', () => {
    expect(
      previewClearing({
        messages: thinkingHistory(3),
        config: defineContextConfig({ preset: 'off', clearThinking: {} }),
      }).appliedEdits[0],
    ).toMatchObject({ cleared_thinking_turns: 2 });
    for (const keep of ['all' as const, { type: 'all' as const }]) {
      expect(
        previewClearing({
          messages: thinkingHistory(3),
          config: defineContextConfig({ preset: 'off', clearThinking: { keep } }),
        }).appliedEdits,
      ).toEqual([]);
    }
  });

  it('thinking is cleared before tool uses are measured, and applied_edits keep request order', () => {
    const messages: BetaMessageParam[] = [...thinkingHistory(3), ...history(3).slice(1)];
    const preview = previewClearing({
      messages,
      config: defineContextConfig({
        preset: 'off',
        clearThinking: {},
        clearToolUses: {
          trigger: { type: 'input_tokens', value: 1 },
          keep: { type: 'tool_uses', value: 1 },
        },
      }),
    });
    expect(preview.appliedEdits.map((edit) => edit.type)).toEqual([
      'clear_thinking_20251015',
      'clear_tool_uses_20250919',
    ]);
    const total = preview.appliedEdits.reduce((sum, edit) => sum + edit.cleared_input_tokens, 0);
    expect(preview.inputTokensAfter).toBe(preview.inputTokensBefore - total);
  });
});

describe('compaction', () => {
  it('is reported as not emulated, with whether its trigger is reached', () => {
    const messages = history(2);
    const config = defineContextConfig({
      preset: 'off',
      compaction: { trigger: { type: 'input_tokens', value: 50_000 } },
    });
    const small = previewClearing({ messages, config });
    expect(small.notEmulated).toEqual(['compact_20260112']);
    expect(small.compactionWouldTrigger).toBe(false);
    expect(small.messages).toEqual(messages);
    const big = previewClearing({ messages: history(2, ['bash'], 250_000), config });
    expect(big.compactionWouldTrigger).toBe(true);
  });
});

describe('cost of the preview', () => {
  it('stays linear: a 2000-round (4 MB) history previews in seconds, not minutes', () => {
    const messages = history(2_000, ['bash', 'memory'], 2_000);
    const started = performance.now();
    const preview = previewClearing({
      messages,
      config: defineContextConfig({ preset: 'coding' }),
    });
    // About 0.3 s here; a per-request pass that re-scanned the history per tool use would take
    // minutes, so the bound is loose enough for a busy 2-core machine and still catches it.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(preview.clearedToolUseIds.length).toBeGreaterThan(900);
  });
});
