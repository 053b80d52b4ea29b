import { describe, expect, it } from 'vitest';
import { defineContextConfig } from './define-context-config.js';
import { summarizeContextConfig } from './summarize-context-config.js';

describe('summarizeContextConfig', () => {
  it.each([
    [{}, 'coding · edits clear_tool_uses · cache on (ttl 5m)'],
    [{ preset: 'off' as const }, 'off · no edits · cache on (ttl 5m)'],
    [
      { preset: 'long-horizon' as const },
      'long-horizon · edits clear_tool_uses, compact · cache on (ttl 5m)',
    ],
    [
      { promptCache: { prefixTtl: '1h' as const } },
      'coding · edits clear_tool_uses · cache on (ttl 1h)',
    ],
    [{ preset: 'off' as const, promptCache: false as const }, 'off · no edits · cache off'],
    [
      { clearThinking: { keep: 'all' as const } },
      'custom · edits clear_thinking, clear_tool_uses · cache on (ttl 5m)',
    ],
  ])('names preset, edits and caching of %j', (input, line) => {
    expect(summarizeContextConfig(defineContextConfig(input))).toBe(line);
  });
});
