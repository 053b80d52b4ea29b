import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineContextConfig } from './define-context-config.js';
import { ContextConfigError } from './errors.js';
import {
  CONFIG_FILE_NAME,
  CONTEXT_ENV_VARS,
  contextVariablesSet,
  loadContextConfig,
  loadContextConfigInput,
} from './load-context-config.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'baton-context-config-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function writeConfig(content: unknown): Promise<void> {
  await writeFile(
    join(directory, CONFIG_FILE_NAME),
    typeof content === 'string' ? content : JSON.stringify(content, null, 2),
  );
}

async function loadError(
  options: Parameters<typeof loadContextConfig>[0],
): Promise<ContextConfigError> {
  try {
    await loadContextConfig(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ContextConfigError);
    return error as ContextConfigError;
  }
  throw new Error('expected loadContextConfig to throw');
}

describe('loadContextConfig sources', () => {
  it('no file, no env, no override: the coding preset', async () => {
    expect(await loadContextConfig({ cwd: directory, env: {} })).toEqual(defineContextConfig());
  });

  it('reads the context key of baton.config.json and ignores other top-level keys', async () => {
    await writeConfig({ model: 'sim', context: { preset: 'search-heavy' } });
    expect(await loadContextConfig({ cwd: directory, env: {} })).toEqual(
      defineContextConfig({ preset: 'search-heavy' }),
    );
  });

  it('a file without a context key gives the defaults', async () => {
    await writeConfig({ model: 'sim' });
    expect((await loadContextConfig({ cwd: directory, env: {} })).preset).toBe('coding');
  });

  it('reads process.env when env is not given', async () => {
    process.env.BATON_CONTEXT_PRESET = 'off';
    try {
      expect((await loadContextConfig({ cwd: directory })).preset).toBe('off');
    } finally {
      delete process.env.BATON_CONTEXT_PRESET;
    }
  });

  it('every env variable maps to its option', async () => {
    const config = await loadContextConfig({
      cwd: directory,
      env: {
        BATON_CONTEXT_PRESET: 'off',
        BATON_CONTEXT_TRIGGER_TOOL_USES: '12',
        BATON_CONTEXT_KEEP_TOOL_USES: '4',
        BATON_CONTEXT_CLEAR_AT_LEAST_TOKENS: '3000',
        BATON_CONTEXT_EXCLUDE_TOOLS: 'web_search, web_fetch',
        BATON_CONTEXT_CLEAR_TOOL_INPUTS: 'bash,str_replace_based_edit_tool',
        BATON_CONTEXT_CLEAR_MEMORY_TOOL: 'false',
        BATON_CONTEXT_THINKING_KEEP: '2',
        BATON_CONTEXT_COMPACTION_TRIGGER_TOKENS: '120000',
      },
    });
    expect(config.context_management?.edits).toEqual([
      { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 2 } },
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'tool_uses', value: 12 },
        keep: { type: 'tool_uses', value: 4 },
        clear_at_least: { type: 'input_tokens', value: 3000 },
        exclude_tools: ['web_search', 'web_fetch', 'memory'],
        clear_tool_inputs: ['bash', 'str_replace_based_edit_tool'],
      },
      {
        type: 'compact_20260112',
        trigger: { type: 'input_tokens', value: 120_000 },
        pause_after_compaction: false,
      },
    ]);
    expect(config.betas).toEqual(['context-management-2025-06-27', 'compact-2026-01-12']);
  });

  it('env switches: off turns a group off, on turns it on with defaults, all keeps all thinking', async () => {
    const config = await loadContextConfig({
      cwd: directory,
      env: {
        BATON_CONTEXT_PRESET: 'long-horizon',
        BATON_CONTEXT_CLEAR_TOOL_USES: 'off',
        BATON_CONTEXT_COMPACTION: 'on',
        BATON_CONTEXT_THINKING_KEEP: 'all',
      },
    });
    expect(config.context_management?.edits.map((edit) => edit.type)).toEqual([
      'clear_thinking_20251015',
      'compact_20260112',
    ]);
    expect(config.context_management?.edits[0]).toEqual({
      type: 'clear_thinking_20251015',
      keep: 'all',
    });
    const tokens = await loadContextConfig({
      cwd: directory,
      env: {
        BATON_CONTEXT_TRIGGER_TOKENS: '9000',
        BATON_CONTEXT_CLEAR_AT_LEAST_TOKENS: '0',
        BATON_CONTEXT_CLEAR_TOOL_INPUTS: 'true',
      },
    });
    expect(tokens.context_management?.edits[0]).toMatchObject({
      trigger: { type: 'input_tokens', value: 9000 },
      clear_tool_inputs: true,
    });
    expect(tokens.context_management?.edits[0]).not.toHaveProperty('clear_at_least');
  });

  it('empty env values count as unset', async () => {
    const config = await loadContextConfig({
      cwd: directory,
      env: { BATON_CONTEXT_PRESET: '', BATON_CONTEXT_KEEP_TOOL_USES: '  ' },
    });
    expect(config).toEqual(defineContextConfig());
  });
});

describe('loadContextConfigInput: the merged layers a project stores', () => {
  it('returns the merged input, which resolves to what loadContextConfig returns', async () => {
    await writeConfig({
      context: { preset: 'search-heavy', clearToolUses: { keep: { type: 'tool_uses', value: 2 } } },
    });
    const env = { BATON_CONTEXT_CACHE_TTL: '1h' };
    const input = await loadContextConfigInput({
      cwd: directory,
      env,
      override: { compaction: false },
    });
    expect(input).toEqual({
      preset: 'search-heavy',
      clearToolUses: { keep: { type: 'tool_uses', value: 2 } },
      promptCache: { prefixTtl: '1h' },
      compaction: false,
    });
    expect(defineContextConfig(input)).toEqual(
      await loadContextConfig({ cwd: directory, env, override: { compaction: false } }),
    );
  });

  it('refuses what loadContextConfig refuses', async () => {
    await expect(
      loadContextConfigInput({ cwd: directory, env: { BATON_CONTEXT_PRESET: 'of' } }),
    ).rejects.toThrow(
      'BATON_CONTEXT_PRESET: must be one of: coding, search-heavy, long-horizon, off (got "of")',
    );
  });
});

describe('precedence: defaults < file < env < override', () => {
  it('each later layer wins field by field', async () => {
    await writeConfig({
      context: {
        preset: 'search-heavy',
        clearToolUses: { keep: { type: 'tool_uses', value: 2 }, exclude_tools: ['web_search'] },
      },
    });
    const config = await loadContextConfig({
      cwd: directory,
      env: { BATON_CONTEXT_KEEP_TOOL_USES: '4' },
      override: { clearToolUses: { clear_at_least: null } },
    });
    expect(config.preset).toBe('custom');
    expect(config.context_management?.edits).toEqual([
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'input_tokens', value: 40_000 }, // search-heavy, from the file's preset
        keep: { type: 'tool_uses', value: 4 }, // env beats file
        exclude_tools: ['web_search', 'memory'], // file
        clear_tool_inputs: false,
        // clear_at_least: override removed the preset's minimum
      },
    ]);
  });

  it('env preset beats the file preset; override preset beats env', async () => {
    await writeConfig({ context: { preset: 'search-heavy' } });
    expect(
      (await loadContextConfig({ cwd: directory, env: { BATON_CONTEXT_PRESET: 'off' } })).preset,
    ).toBe('off');
    expect(
      (
        await loadContextConfig({
          cwd: directory,
          env: { BATON_CONTEXT_PRESET: 'off' },
          override: { preset: 'long-horizon' },
        })
      ).preset,
    ).toBe('long-horizon');
  });

  it('a group turned off in the file is turned back on, from the preset, by a later field', async () => {
    await writeConfig({ context: { clearToolUses: false } });
    expect(
      (await loadContextConfig({ cwd: directory, env: {} })).context_management,
    ).toBeUndefined();
    const config = await loadContextConfig({
      cwd: directory,
      env: { BATON_CONTEXT_KEEP_TOOL_USES: '1' },
    });
    expect(config.context_management?.edits[0]).toMatchObject({
      trigger: { type: 'input_tokens', value: 80_000 },
      keep: { type: 'tool_uses', value: 1 },
    });
  });
});

describe('bad files and env give one error per problem with its path', () => {
  it('every problem in the file is listed with its path under context', async () => {
    await writeConfig({
      context: {
        preset: 'fastest',
        clearToolUses: { keep: { type: 'tool_uses', value: -2 }, exclude_tool: ['x'] },
        compaction: { trigger: { type: 'input_tokens', value: 'lots' } },
      },
    });
    const error = await loadError({ cwd: directory, env: {} });
    expect(error.code).toBe('invalid_file');
    expect(error.issues.map((issue) => [issue.source, issue.path])).toEqual([
      ['baton.config.json', 'context.preset'],
      ['baton.config.json', 'context.clearToolUses.keep.value'],
      ['baton.config.json', 'context.clearToolUses.exclude_tool'],
      ['baton.config.json', 'context.compaction.trigger.value'],
    ]);
    expect(error.message).toContain(
      '- baton.config.json: context.clearToolUses.keep.value: must not be negative (got -2)',
    );
  });

  it('a contradiction inside the file points into the file', async () => {
    await writeConfig({
      context: {
        clearToolUses: {
          trigger: { type: 'tool_uses', value: 2 },
          keep: { type: 'tool_uses', value: 3 },
        },
      },
    });
    const error = await loadError({ cwd: directory, env: {} });
    expect(error.code).toBe('invalid_file');
    expect(error.issues).toEqual([
      expect.objectContaining({
        source: 'baton.config.json',
        path: 'context.clearToolUses.keep.value',
      }),
    ]);
  });

  it('a contradiction made by combining layers names the layer that wrote the offending value', async () => {
    await writeConfig({ context: { clearToolUses: { trigger: { type: 'tool_uses', value: 6 } } } });
    // The file alone is fine (keep 5 from the coding preset); env's keep 8 breaks it.
    const error = await loadError({ cwd: directory, env: { BATON_CONTEXT_KEEP_TOOL_USES: '8' } });
    expect(error.code).toBe('invalid_env');
    expect(error.issues).toEqual([
      expect.objectContaining({
        source: 'env',
        path: 'BATON_CONTEXT_KEEP_TOOL_USES (clearToolUses.keep.value)',
      }),
    ]);
    // The other way round is fine: a tool-use trigger from env with a small keep from the file.
    await writeConfig({ context: { clearToolUses: { keep: { type: 'tool_uses', value: 1 } } } });
    await expect(
      loadContextConfig({ cwd: directory, env: { BATON_CONTEXT_TRIGGER_TOOL_USES: '2' } }),
    ).resolves.toMatchObject({ preset: 'custom' });
  });

  it('a tool-use trigger in the file below the preset keep points at the trigger in the file', async () => {
    await writeConfig({ context: { clearToolUses: { trigger: { type: 'tool_uses', value: 2 } } } });
    const error = await loadError({ cwd: directory, env: {} });
    expect(error.issues).toEqual([
      expect.objectContaining({
        source: 'baton.config.json',
        path: 'context.clearToolUses.trigger.value',
      }),
    ]);
  });

  it('invalid JSON is one error naming the file', async () => {
    await writeConfig('{ "context": { "preset": "coding", } }');
    const error = await loadError({ cwd: directory, env: {} });
    expect(error.code).toBe('invalid_file');
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({ source: 'baton.config.json', path: '' });
    expect(error.issues[0]?.message).toMatch(/not valid JSON/);
  });

  it('a file that is not an object is an error', async () => {
    await writeConfig('[1, 2]');
    expect((await loadError({ cwd: directory, env: {} })).issues[0]?.message).toBe(
      'must be a JSON object',
    );
  });

  it('a config path that cannot be read is an unreadable_file error without host paths', async () => {
    await mkdir(join(directory, CONFIG_FILE_NAME));
    const error = await loadError({ cwd: directory, env: {} });
    expect(error.code).toBe('unreadable_file');
    expect(error.message).not.toContain(directory);
  });

  it('bad env values are errors naming the variable', async () => {
    const error = await loadError({
      cwd: directory,
      env: {
        BATON_CONTEXT_PRESET: 'turbo',
        BATON_CONTEXT_KEEP_TOOL_USES: '-1',
        BATON_CONTEXT_TRIGGER_TOKENS: '10k',
        BATON_CONTEXT_COMPACTION: 'maybe',
        BATON_CONTEXT_THINKING_KEEP: '0',
      },
    });
    expect(error.code).toBe('invalid_env');
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'BATON_CONTEXT_PRESET',
      'BATON_CONTEXT_TRIGGER_TOKENS',
      'BATON_CONTEXT_KEEP_TOOL_USES',
      'BATON_CONTEXT_THINKING_KEEP',
      'BATON_CONTEXT_COMPACTION',
    ]);
  });

  it('conflicting env variables are errors', async () => {
    const error = await loadError({
      cwd: directory,
      env: {
        BATON_CONTEXT_TRIGGER_TOKENS: '1000',
        BATON_CONTEXT_TRIGGER_TOOL_USES: '10',
        BATON_CONTEXT_COMPACTION: 'off',
        BATON_CONTEXT_COMPACTION_TRIGGER_TOKENS: '90000',
      },
    });
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'BATON_CONTEXT_TRIGGER_TOOL_USES',
      'BATON_CONTEXT_COMPACTION',
    ]);
  });

  it('env values that pass parsing are still checked by the schema rules', async () => {
    const error = await loadError({
      cwd: directory,
      env: { BATON_CONTEXT_COMPACTION_TRIGGER_TOKENS: '1000' },
    });
    expect(error.issues).toEqual([
      expect.objectContaining({
        source: 'env',
        path: 'BATON_CONTEXT_COMPACTION_TRIGGER_TOKENS (compaction.trigger.value)',
      }),
    ]);
  });

  it('file and override problems are reported together', async () => {
    await writeConfig({
      context: { clearThinking: { keep: { type: 'thinking_turns', value: 0 } } },
    });
    const error = await loadError({
      cwd: directory,
      env: {},
      override: { compaction: { pause_after_compaction: 'no' } } as never,
    });
    expect(error.code).toBe('invalid_file');
    expect(error.issues.map((issue) => [issue.source, issue.path])).toEqual([
      ['baton.config.json', 'context.clearThinking.keep.value'],
      ['override', 'compaction.pause_after_compaction'],
    ]);
  });
});

describe('contextVariablesSet', () => {
  it('names the BATON_CONTEXT_* variables set, in CONTEXT_ENV_VARS order, blank ones unset', () => {
    expect(
      contextVariablesSet({
        BATON_CONTEXT_THINKING_KEEP: '2',
        BATON_CONTEXT_PRESET: 'off',
        BATON_CONTEXT_COMPACTION: '  ',
        BATON_CONTEXT_EXCLUDE_TOOLS: '',
        BATON_CONTEXT_UNKNOWN: 'x',
        BATON_MODEL: 'sim',
      }),
    ).toEqual([CONTEXT_ENV_VARS.preset, CONTEXT_ENV_VARS.thinkingKeep]);
    expect(contextVariablesSet({})).toEqual([]);
  });

  it('reads process.env when env is not given', () => {
    process.env.BATON_CONTEXT_PROMPT_CACHE = 'off';
    try {
      expect(contextVariablesSet()).toContain('BATON_CONTEXT_PROMPT_CACHE');
    } finally {
      delete process.env.BATON_CONTEXT_PROMPT_CACHE;
    }
  });
});
