import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expect, it } from 'vitest';
import { defineContextConfig } from './define-context-config.js';
import { mirrorAppliedEdits } from './mirror-applied-edits.js';
import { CLEARED_TOOL_RESULT_TEXT, previewClearing } from './preview-clearing.js';

function history(names: string[]): BetaMessageParam[] {
  const messages: BetaMessageParam[] = [{ role: 'user', content: 'go' }];
  names.forEach((name, index) => {
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `t${index}`, name, input: { n: index } }],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `t${index}`, content: 'x'.repeat(4_000) }],
    });
  });
  return messages;
}

const config = defineContextConfig({
  clearToolUses: {
    trigger: { type: 'input_tokens', value: 2_000 },
    keep: { type: 'tool_uses', value: 1 },
    clear_at_least: null,
  },
});

describe('mirrorAppliedEdits', () => {
  it('clears the same tool uses the server reported, so the history drops under the trigger', () => {
    const messages = history(['bash', 'memory', 'bash', 'bash']);
    const preview = previewClearing({ messages, config });
    expect(preview.appliedEdits[0]).toMatchObject({ cleared_tool_uses: 2 });
    const mirrored = mirrorAppliedEdits(messages, config, preview.appliedEdits);
    expect(mirrored).toEqual(preview.messages);
    // Nothing is left to clear: the next request sends exactly the cleared prompt.
    expect(previewClearing({ messages: mirrored, config }).appliedEdits).toEqual([]);
    expect(JSON.stringify(messages)).not.toContain(CLEARED_TOOL_RESULT_TEXT);
  });

  it('skips uses already cleared, so a later clear continues where the last one stopped', () => {
    const messages = history(['bash', 'bash', 'bash']);
    const once = mirrorAppliedEdits(messages, config, [
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: 1_000 },
    ]);
    const twice = mirrorAppliedEdits(once, config, [
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: 1_000 },
    ]);
    const results = twice.flatMap((message) =>
      Array.isArray(message.content)
        ? message.content.flatMap((block) => (block.type === 'tool_result' ? [block.content] : []))
        : [],
    );
    expect(results.map((content) => content === CLEARED_TOOL_RESULT_TEXT)).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('mirrors thinking clearing by the edit keep, and keeps everything with keep all', () => {
    const thinking = (index: number): BetaMessageParam => ({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `think ${index}`, signature: 's' },
        { type: 'text', text: `answer ${index}` },
      ],
    });
    const messages: BetaMessageParam[] = [
      { role: 'user', content: 'a' },
      thinking(1),
      { role: 'user', content: 'b' },
      thinking(2),
      { role: 'user', content: 'c' },
    ];
    const applied = [
      {
        type: 'clear_thinking_20251015' as const,
        cleared_thinking_turns: 1,
        cleared_input_tokens: 5,
      },
    ];
    const keepOne = defineContextConfig({
      clearThinking: { keep: { type: 'thinking_turns', value: 1 } },
    });
    const mirrored = mirrorAppliedEdits(messages, keepOne, applied);
    expect(JSON.stringify(mirrored)).not.toContain('think 1');
    expect(JSON.stringify(mirrored)).toContain('think 2');
    const keepAll = defineContextConfig({ clearThinking: { keep: 'all' } });
    expect(mirrorAppliedEdits(messages, keepAll, applied)).toBe(messages);
  });

  it('returns the same history when nothing was applied', () => {
    const messages = history(['bash']);
    expect(mirrorAppliedEdits(messages, config, [])).toBe(messages);
  });
});

describe('previewClearing shows what each applied edit costs the cache', () => {
  it('rewrites from the first changed message on, priced at write - read, with its break-even', () => {
    const messages = history(['bash', 'bash', 'bash', 'bash']);
    const preview = previewClearing({ messages, config, model: 'sim-sonnet' });
    expect(preview.cacheInvalidation).toHaveLength(1);
    const [entry] = preview.cacheInvalidation;
    // The first cleared result is in message 2 (user, after the first tool_use).
    expect(entry).toMatchObject({ type: 'clear_tool_uses_20250919', firstChangedMessage: 2 });
    let rewritten = 0;
    for (const message of preview.messages.slice(2))
      rewritten += JSON.stringify(message.content).length;
    expect(entry!.rewrittenInputTokens).toBeGreaterThan(1_000);
    expect(entry!.rewrittenInputTokens).toBeLessThanOrEqual(Math.ceil(rewritten / 4) + 10);
    expect(entry!.invalidationCostUsd).toBeCloseTo((entry!.rewrittenInputTokens * 3.45) / 1e6, 12);
    expect(entry!.breakEvenRequests).toBeCloseTo(
      (11.5 * entry!.rewrittenInputTokens) / preview.appliedEdits[0]!.cleared_input_tokens,
      9,
    );
  });
});
