import { describe, expect, it } from 'vitest';
import { defineContextConfig } from './define-context-config.js';
import { ContextConfigError, type ContextConfigIssue } from './errors.js';
import { CONTEXT_PRESETS } from './presets.js';
import type { ContextConfigInput } from './types.js';

function issuesOf(input: unknown): ContextConfigIssue[] {
  try {
    defineContextConfig(input as ContextConfigInput);
  } catch (error) {
    expect(error).toBeInstanceOf(ContextConfigError);
    expect((error as ContextConfigError).code).toBe('invalid_config');
    return [...(error as ContextConfigError).issues];
  }
  throw new Error('expected defineContextConfig to throw');
}

function paths(input: unknown): string[] {
  return issuesOf(input).map((issue) => issue.path);
}

describe('defaults', () => {
  it('no input resolves to the coding preset', () => {
    const config = defineContextConfig();
    expect(config.preset).toBe('coding');
    expect(config.betas).toEqual(['context-management-2025-06-27']);
    expect(config.context_management).toEqual({
      edits: [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'input_tokens', value: 80_000 },
          keep: { type: 'tool_uses', value: 5 },
          clear_at_least: { type: 'input_tokens', value: 40_000 },
          exclude_tools: ['memory'],
          clear_tool_inputs: false,
        },
      ],
    });
  });

  it('an empty clearToolUses group on preset off gets every API default written out', () => {
    const config = defineContextConfig({ preset: 'off', clearToolUses: {} });
    expect(config.context_management?.edits).toEqual([
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'input_tokens', value: 100_000 },
        keep: { type: 'tool_uses', value: 3 },
        exclude_tools: ['memory'],
        clear_tool_inputs: false,
      },
    ]);
    expect(config.preset).toBe('custom');
  });

  it('an empty clearThinking group keeps the thinking of 1 turn', () => {
    const config = defineContextConfig({ preset: 'off', clearThinking: {} });
    expect(config.context_management?.edits).toEqual([
      { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } },
    ]);
    expect(config.betas).toEqual(['context-management-2025-06-27']);
  });

  it('an empty compaction group triggers at 150k without pausing and adds the compaction beta', () => {
    const config = defineContextConfig({ preset: 'off', compaction: {} });
    expect(config.context_management?.edits).toEqual([
      {
        type: 'compact_20260112',
        trigger: { type: 'input_tokens', value: 150_000 },
        pause_after_compaction: false,
      },
    ]);
    expect(config.betas).toEqual(['context-management-2025-06-27', 'compact-2026-01-12']);
  });
});

describe('every option reaches the edit', () => {
  it('clear_tool_uses options are passed through in the API shape', () => {
    const config = defineContextConfig({
      preset: 'off',
      clearToolUses: {
        trigger: { type: 'tool_uses', value: 10 },
        keep: { type: 'tool_uses', value: 2 },
        clear_at_least: { type: 'input_tokens', value: 5_000 },
        exclude_tools: ['web_search', 'web_search'],
        clear_tool_inputs: ['bash', 'bash'],
      },
    });
    expect(config.context_management?.edits).toEqual([
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'tool_uses', value: 10 },
        keep: { type: 'tool_uses', value: 2 },
        clear_at_least: { type: 'input_tokens', value: 5_000 },
        exclude_tools: ['web_search', 'memory'],
        clear_tool_inputs: ['bash'],
      },
    ]);
  });

  it('clear_tool_inputs true is kept as a boolean', () => {
    const edit = defineContextConfig({ clearToolUses: { clear_tool_inputs: true } })
      .context_management?.edits[0];
    expect(edit).toMatchObject({ clear_tool_inputs: true });
  });

  it('clear_at_least null means no minimum and is omitted', () => {
    const edit = defineContextConfig({ clearToolUses: { clear_at_least: null } }).context_management
      ?.edits[0];
    expect(edit).not.toHaveProperty('clear_at_least');
  });

  it.each([
    ['all' as const, 'all'],
    [{ type: 'all' as const }, { type: 'all' }],
    [
      { type: 'thinking_turns' as const, value: 3 },
      { type: 'thinking_turns', value: 3 },
    ],
  ])('clear_thinking keep %j is passed through', (keep, expected) => {
    const config = defineContextConfig({ preset: 'off', clearThinking: { keep } });
    expect(config.context_management?.edits).toEqual([
      { type: 'clear_thinking_20251015', keep: expected },
    ]);
  });

  it('compaction options are passed through', () => {
    const config = defineContextConfig({
      preset: 'off',
      compaction: {
        trigger: { type: 'input_tokens', value: 60_000 },
        instructions: 'Keep the feature list.',
        pause_after_compaction: true,
      },
    });
    expect(config.context_management?.edits).toEqual([
      {
        type: 'compact_20260112',
        trigger: { type: 'input_tokens', value: 60_000 },
        instructions: 'Keep the feature list.',
        pause_after_compaction: true,
      },
    ]);
  });
});

describe('ordering and memory rules', () => {
  it('clear_thinking always comes first, then clear_tool_uses, then compaction', () => {
    const config = defineContextConfig({
      compaction: {},
      clearToolUses: {},
      clearThinking: { keep: 'all' },
    });
    expect(config.context_management?.edits.map((edit) => edit.type)).toEqual([
      'clear_thinking_20251015',
      'clear_tool_uses_20250919',
      'compact_20260112',
    ]);
  });

  it('the memory tool is excluded from clearing unless clearMemoryTool is true', () => {
    const excluded = (input: ContextConfigInput) => {
      const edit = defineContextConfig(input).context_management?.edits[0];
      return edit?.type === 'clear_tool_uses_20250919' ? edit.exclude_tools : undefined;
    };
    expect(excluded({ clearToolUses: {} })).toEqual(['memory']);
    expect(excluded({ clearToolUses: { exclude_tools: ['bash'] } })).toEqual(['bash', 'memory']);
    expect(excluded({ clearToolUses: { exclude_tools: ['memory'] } })).toEqual(['memory']);
    expect(excluded({ clearToolUses: { clearMemoryTool: true } })).toEqual([]);
  });

  it('clearMemoryTool is a Baton option and never sent to the API', () => {
    const edit = defineContextConfig({ clearToolUses: { clearMemoryTool: false } })
      .context_management?.edits[0];
    expect(edit).not.toHaveProperty('clearMemoryTool');
  });
});

describe('presets', () => {
  it.each(['coding', 'search-heavy', 'long-horizon', 'off'] as const)(
    '%s resolves under its own name and has a written intent',
    (name) => {
      const config = defineContextConfig({ preset: name });
      expect(config.preset).toBe(name);
      expect(CONTEXT_PRESETS[name].intent.length).toBeGreaterThan(40);
    },
  );

  it('off sends no context_management and no beta', () => {
    expect(defineContextConfig({ preset: 'off' })).toEqual({
      preset: 'off',
      betas: [],
      context_management: undefined,
      promptCache: { prefixTtl: '5m' },
    });
  });

  it('long-horizon turns compaction on with its beta', () => {
    const config = defineContextConfig({ preset: 'long-horizon' });
    expect(config.betas).toContain('compact-2026-01-12');
    expect(config.context_management?.edits.map((edit) => edit.type)).toEqual([
      'clear_tool_uses_20250919',
      'compact_20260112',
    ]);
  });

  it('search-heavy clears earlier than coding', () => {
    const trigger = (name: 'coding' | 'search-heavy') => {
      const edit = defineContextConfig({ preset: name }).context_management?.edits[0];
      return edit?.type === 'clear_tool_uses_20250919' ? edit.trigger?.value : undefined;
    };
    expect(trigger('search-heavy')).toBeLessThan(trigger('coding') ?? 0);
  });

  it('a group overrides the preset field by field and makes the preset custom', () => {
    const config = defineContextConfig({
      preset: 'coding',
      clearToolUses: { keep: { type: 'tool_uses', value: 2 } },
    });
    expect(config.preset).toBe('custom');
    expect(config.context_management?.edits[0]).toMatchObject({
      trigger: { type: 'input_tokens', value: 80_000 },
      keep: { type: 'tool_uses', value: 2 },
      clear_at_least: { type: 'input_tokens', value: 40_000 },
    });
  });

  it('a group set to false turns that edit off', () => {
    const config = defineContextConfig({ preset: 'long-horizon', compaction: false });
    expect(config.betas).toEqual(['context-management-2025-06-27']);
    expect(config.context_management?.edits.map((edit) => edit.type)).toEqual([
      'clear_tool_uses_20250919',
    ]);
    const none = defineContextConfig({ clearToolUses: false });
    expect(none.context_management).toBeUndefined();
    expect(none.betas).toEqual([]);
  });

  it('the resolved config does not share objects with the presets', () => {
    const config = defineContextConfig({ preset: 'coding' });
    const edit = config.context_management?.edits[0];
    if (edit?.type === 'clear_tool_uses_20250919' && edit.keep) edit.keep.value = 99;
    expect(defineContextConfig({ preset: 'coding' }).context_management?.edits[0]).toMatchObject({
      keep: { value: 5 },
    });
  });
});

describe('errors name the key path and the rule', () => {
  it('unknown keys at every level are errors naming the key', () => {
    const issues = issuesOf({
      prest: 'coding',
      clearToolUses: { keep: { type: 'tool_uses', value: 1, extra: true }, exclude: [] },
      clearThinking: { keepTurns: 1 },
      compaction: { pause: true },
    });
    expect(issues.map((issue) => issue.path).sort()).toEqual(
      [
        'prest',
        'clearToolUses.keep.extra',
        'clearToolUses.exclude',
        'clearThinking.keepTurns',
        'compaction.pause',
      ].sort(),
    );
    expect(issues.find((issue) => issue.path === 'prest')?.message).toMatch(
      /unknown key; allowed keys here: preset, clearToolUses, clearThinking, compaction/,
    );
  });

  it('negative numbers are errors naming the key', () => {
    const issues = issuesOf({
      preset: 'off',
      clearToolUses: {
        keep: { type: 'tool_uses', value: -1 },
        clear_at_least: { type: 'input_tokens', value: -5 },
      },
    });
    expect(issues).toEqual([
      expect.objectContaining({
        path: 'clearToolUses.keep.value',
        message: 'must not be negative (got -1)',
      }),
      expect.objectContaining({
        path: 'clearToolUses.clear_at_least.value',
        message: 'must not be negative (got -5)',
      }),
    ]);
  });

  it('triggers must be at least 1 and whole numbers', () => {
    expect(issuesOf({ clearToolUses: { trigger: { type: 'tool_uses', value: 0 } } })).toEqual([
      expect.objectContaining({
        path: 'clearToolUses.trigger.value',
        message: 'must be at least 1 (got 0)',
      }),
    ]);
    expect(issuesOf({ clearToolUses: { trigger: { type: 'input_tokens', value: 1.5 } } })).toEqual([
      expect.objectContaining({
        path: 'clearToolUses.trigger.value',
        message: 'must be a whole number',
      }),
    ]);
  });

  it('an unknown trigger type names the accepted shapes', () => {
    expect(issuesOf({ clearToolUses: { trigger: { type: 'turns', value: 3 } } })).toEqual([
      expect.objectContaining({
        path: 'clearToolUses.trigger.type',
        message: expect.stringMatching(/"input_tokens" \| "tool_uses"/),
      }),
    ]);
  });

  it('keep greater than a tool-use trigger is a contradiction', () => {
    expect(
      issuesOf({
        clearToolUses: {
          trigger: { type: 'tool_uses', value: 3 },
          keep: { type: 'tool_uses', value: 4 },
        },
      }),
    ).toEqual([
      expect.objectContaining({
        path: 'clearToolUses.keep.value',
        message: expect.stringMatching(
          /must not be greater than clearToolUses.trigger.value \(3\)/,
        ),
      }),
    ]);
    // The preset's keep (5) against a user's tool-use trigger counts too, reported on the trigger.
    expect(issuesOf({ clearToolUses: { trigger: { type: 'tool_uses', value: 4 } } })).toEqual([
      expect.objectContaining({
        path: 'clearToolUses.trigger.value',
        message: expect.stringMatching(
          /must not be less than clearToolUses.keep.value \(5, from the preset\)/,
        ),
      }),
    ]);
    expect(() =>
      defineContextConfig({
        clearToolUses: {
          trigger: { type: 'tool_uses', value: 3 },
          keep: { type: 'tool_uses', value: 3 },
        },
      }),
    ).not.toThrow();
  });

  it('keep is compared with tool-use triggers only', () => {
    expect(() =>
      defineContextConfig({
        clearToolUses: {
          trigger: { type: 'input_tokens', value: 3 },
          keep: { type: 'tool_uses', value: 10 },
        },
      }),
    ).not.toThrow();
  });

  it('excluding memory while clearMemoryTool is true is a contradiction', () => {
    expect(
      paths({ clearToolUses: { clearMemoryTool: true, exclude_tools: ['bash', 'memory'] } }),
    ).toEqual(['clearToolUses.exclude_tools[1]']);
  });

  it('clearing the inputs of an excluded tool is a contradiction', () => {
    expect(
      issuesOf({
        clearToolUses: { exclude_tools: ['bash'], clear_tool_inputs: ['x', 'bash', 'memory'] },
      }),
    ).toEqual([
      expect.objectContaining({
        path: 'clearToolUses.clear_tool_inputs[1]',
        message: expect.stringMatching(/also in clearToolUses.exclude_tools/),
      }),
      expect.objectContaining({
        path: 'clearToolUses.clear_tool_inputs[2]',
        message: expect.stringMatching(/unless clearToolUses.clearMemoryTool is true/),
      }),
    ]);
  });

  it('a compaction trigger below the API minimum is an error', () => {
    expect(issuesOf({ compaction: { trigger: { type: 'input_tokens', value: 10_000 } } })).toEqual([
      expect.objectContaining({
        path: 'compaction.trigger.value',
        message: expect.stringMatching(/at least 50000/),
      }),
    ]);
  });

  it('wrong types are errors', () => {
    expect(
      issuesOf({
        preset: 'fast',
        clearToolUses: true,
        clearThinking: { keep: 'some' },
        compaction: { instructions: '  ', pause_after_compaction: 'yes' },
      }),
    ).toEqual([
      expect.objectContaining({ path: 'preset', message: expect.stringMatching(/one of: coding/) }),
      expect.objectContaining({ path: 'clearToolUses', message: 'must be false or an object' }),
      expect.objectContaining({
        path: 'clearThinking.keep',
        message: expect.stringMatching(/"all"/),
      }),
      expect.objectContaining({
        path: 'compaction.instructions',
        message: expect.stringMatching(/empty/),
      }),
      expect.objectContaining({
        path: 'compaction.pause_after_compaction',
        message: 'must be true or false',
      }),
    ]);
    expect(paths({ clearToolUses: { exclude_tools: ['bash', ''] } })).toEqual([
      'clearToolUses.exclude_tools[1]',
    ]);
    expect(paths('coding')).toEqual(['']);
  });

  it.each([
    [{ clearToolUses: { keep: 3 } }, 'clearToolUses.keep', 'must be an object'],
    [
      { clearToolUses: { keep: { type: 'x', value: 1 } } },
      'clearToolUses.keep.type',
      'must be "tool_uses"',
    ],
    [
      { clearToolUses: { exclude_tools: 'bash' } },
      'clearToolUses.exclude_tools',
      'must be a list of tool names',
    ],
    [{ clearToolUses: null }, 'clearToolUses', 'must be false or an object'],
    [
      { clearToolUses: { clear_tool_inputs: 'bash' } },
      'clearToolUses.clear_tool_inputs',
      'must be true, false or a list of tool names',
    ],
    [
      { clearToolUses: { clear_tool_inputs: ['bash', 3] } },
      'clearToolUses.clear_tool_inputs[1]',
      'must be a tool name (string)',
    ],
    [
      { clearThinking: { keep: { type: 'thinking_turns' } } },
      'clearThinking.keep.value',
      'must be a number',
    ],
    [
      { compaction: { trigger: { type: 'input_tokens', value: 60_000, extra: 1 } } },
      'compaction.trigger.extra',
      'unknown key; allowed keys here: type, value',
    ],
    [null, '', 'must be an object'],
  ])('%j is refused at %s: %s', (input, path, message) => {
    expect(issuesOf(input)).toEqual([expect.objectContaining({ path, message })]);
  });

  it('one error lists every problem in its message', () => {
    try {
      defineContextConfig({
        preset: 'off',
        clearToolUses: { keep: { type: 'tool_uses', value: -1 } },
        compaction: { pause: true },
      } as unknown as ContextConfigInput);
      expect.unreachable();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/^Invalid context config \(2 problems\):/);
      expect(message).toContain('- clearToolUses.keep.value: must not be negative (got -1)');
      expect(message).toContain('- compaction.pause: unknown key');
    }
  });

  it('contradictions are only checked once the schema passes, so each problem is reported once', () => {
    expect(
      paths({
        clearToolUses: {
          trigger: { type: 'tool_uses', value: 2 },
          keep: { type: 'tool_uses', value: -3 },
        },
      }),
    ).toEqual(['clearToolUses.keep.value']);
  });
});
