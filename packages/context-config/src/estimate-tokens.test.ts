import { describe, expect, it } from 'vitest';
import { estimateInputTokens, estimateMessageTokens, estimateTokens } from './estimate-tokens.js';

describe('estimateTokens', () => {
  it('is ceil(chars / 4) of a string', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('x'.repeat(400))).toBe(100);
  });

  it('is ceil(chars / 4) of the JSON of anything else', () => {
    const value = { a: [1, 2, 3], b: 'text' };
    expect(estimateTokens(value)).toBe(Math.ceil(JSON.stringify(value).length / 4));
    expect(estimateTokens(12345)).toBe(2);
  });

  it('counts nothing for null, undefined and functions', () => {
    expect(estimateTokens(undefined)).toBe(0);
    expect(estimateTokens(null)).toBe(0);
    expect(estimateTokens(() => 1)).toBe(0);
  });

  it('is deterministic', () => {
    const value = { messages: [{ role: 'user', content: 'hello' }] };
    expect(estimateTokens(value)).toBe(estimateTokens(structuredClone(value)));
  });
});

describe('estimateInputTokens', () => {
  it('sums system, each tool and each content block', () => {
    const block = { type: 'text' as const, text: 'x'.repeat(40) };
    const tool = { name: 'bash', type: 'bash_20250124' };
    const total = estimateInputTokens({
      system: 's'.repeat(8),
      tools: [tool, tool],
      messages: [
        { role: 'user', content: 'u'.repeat(12) },
        { role: 'assistant', content: [block, block] },
      ],
    });
    expect(total).toBe(2 + 2 * estimateTokens(tool) + 3 + 2 * estimateTokens(block));
  });

  it('counts system blocks one by one', () => {
    const block = { type: 'text' as const, text: 'y'.repeat(10) };
    expect(estimateInputTokens({ system: [block, block], messages: [] })).toBe(
      2 * estimateTokens(block),
    );
  });

  it('counts a system message without content as 0', () => {
    expect(estimateMessageTokens({ role: 'system' })).toBe(0);
  });
});
