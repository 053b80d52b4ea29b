import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelSim, type ModelSim, type SimRequestRecord } from '@baton/model-sim';
import { beforeEach, describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { EXAMPLE_GOAL, cliEnv, runCli } from './helpers.js';

// `baton run` resolves its sessions' context config with loadContextConfig: baton.config.json in
// the directory it runs in < BATON_CONTEXT_* < --preset. The simulator's request log shows what
// each request really carried.
const world = cliWorld();
let sim: ModelSim;
beforeEach(async () => {
  sim = world.closeAfter(await startModelSim({ port: 0 }));
});

/** One init session against the test's simulator; returns the run and the requests it sent. */
async function runOneSession(
  project: string,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string; requests: SimRequestRecord[] }> {
  const before = sim.received.length;
  const result = await runCli(
    [
      'run',
      '--goal-file',
      EXAMPLE_GOAL,
      '--project',
      project,
      '--sessions',
      '1',
      '--model',
      'claude-test',
      ...args,
    ],
    {
      cwd: world.dir,
      env: cliEnv(world.home, {
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: sim.url,
        ...env,
      }),
    },
  );
  const requests = sim.received.slice(before).filter((entry) => entry.path === '/v1/messages');
  return { ...result, requests };
}

describe('baton run reads baton.config.json and BATON_CONTEXT_*', () => {
  it('BATON_CONTEXT_PRESET=off sends no context_management; without it every request clears tool uses', async () => {
    const defaults = await runOneSession('defaults');
    expect(defaults.stderr).toBe('');
    expect(defaults.requests.length).toBeGreaterThan(1);
    expect(
      defaults.requests.every((entry) => entry.contextEdits?.[0] === 'clear_tool_uses_20250919'),
    ).toBe(true);
    expect(defaults.stdout).toContain(
      'Context: coding · edits clear_tool_uses · cache on (ttl 5m).',
    );

    const off = await runOneSession('off', { BATON_CONTEXT_PRESET: 'off' });
    expect(off.stderr).toBe('');
    expect(off.requests.length).toBeGreaterThan(1);
    expect(off.requests.every((entry) => entry.contextEdits === undefined)).toBe(true);
    expect(off.stdout).toContain('Context: off · no edits · cache on (ttl 5m).');
  });

  it('promptCache.prefixTtl 1h from baton.config.json, or BATON_CONTEXT_CACHE_TTL=1h, puts ttl 1h on the stable prefix', async () => {
    const fiveMinutes = await runOneSession('five');
    expect(fiveMinutes.requests.every((entry) => entry.cache?.breakpointTtls[0] === '5m')).toBe(
      true,
    );

    await writeFile(
      path.join(world.dir, 'baton.config.json'),
      JSON.stringify({ context: { promptCache: { prefixTtl: '1h' } } }),
    );
    const fromFile = await runOneSession('file');
    expect(fromFile.stderr).toBe('');
    expect(fromFile.requests.length).toBeGreaterThan(1);
    expect(fromFile.requests.every((entry) => entry.cache?.breakpointTtls[0] === '1h')).toBe(true);
    // The other breakpoints (the conversation) stay at 5 minutes.
    expect(fromFile.requests.at(-1)?.cache?.breakpointTtls.slice(1)).toContain('5m');
    expect(fromFile.stdout).toContain('cache on (ttl 1h)');

    // The environment is over the file: BATON_CONTEXT_PROMPT_CACHE=off sends no breakpoint.
    const cacheOff = await runOneSession('nocache', { BATON_CONTEXT_PROMPT_CACHE: 'off' });
    expect(cacheOff.requests.every((entry) => entry.cache?.breakpoints === 0)).toBe(true);
    expect(cacheOff.stdout).toContain('cache off');
  });

  it('BATON_CONTEXT_CACHE_TTL=1h without a file; --preset is over the environment', async () => {
    const result = await runOneSession(
      'env',
      { BATON_CONTEXT_CACHE_TTL: '1h', BATON_CONTEXT_PRESET: 'off' },
      ['--preset', 'long-horizon'],
    );
    expect(result.stderr).toBe('');
    expect(result.requests.every((entry) => entry.cache?.breakpointTtls[0] === '1h')).toBe(true);
    expect(result.requests[0]?.contextEdits).toEqual([
      'clear_tool_uses_20250919',
      'compact_20260112',
    ]);
  });

  it('a bad variable or file stops the run before anything starts, in one line naming it', async () => {
    const badEnv = await runOneSession('bad', { BATON_CONTEXT_CACHE_TTL: '2h' });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr.trim().split('\n')).toEqual([
      'baton: invalid context config: env: BATON_CONTEXT_CACHE_TTL: must be 5m or 1h (got "2h").',
    ]);
    expect(badEnv.requests).toHaveLength(0);

    await writeFile(path.join(world.dir, 'baton.config.json'), '{"context": {"preset": "fast"}}');
    const badFile = await runOneSession('bad');
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toMatch(
      /^baton: invalid context config: baton\.config\.json: context\.preset: /,
    );
    expect(badFile.stderr.trim().split('\n')).toHaveLength(1);
    expect(badFile.requests).toHaveLength(0);
  });
});

describe('every BATON_CONTEXT_* variable of docs/context-management.md', () => {
  // Three runs between them set every variable of the docs' tables off its default; the
  // simulator records the `context_management` each first request really carried.
  const runs: Array<{ env: Record<string, string>; sent: unknown }> = [
    {
      env: {
        BATON_CONTEXT_PRESET: 'coding',
        BATON_CONTEXT_CLEAR_TOOL_USES: 'on',
        BATON_CONTEXT_TRIGGER_TOKENS: '12345',
        BATON_CONTEXT_KEEP_TOOL_USES: '4',
        BATON_CONTEXT_CLEAR_AT_LEAST_TOKENS: '2222',
        BATON_CONTEXT_EXCLUDE_TOOLS: 'web_fetch,bash',
        BATON_CONTEXT_CLEAR_TOOL_INPUTS: 'true',
        BATON_CONTEXT_CLEAR_MEMORY_TOOL: 'true',
        BATON_CONTEXT_THINKING_KEEP: '2',
        BATON_CONTEXT_COMPACTION_TRIGGER_TOKENS: '150000',
      },
      sent: {
        edits: [
          { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 2 } },
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'input_tokens', value: 12345 },
            keep: { type: 'tool_uses', value: 4 },
            // clearMemoryTool: true, so "memory" is not kept out of clearing.
            exclude_tools: ['web_fetch', 'bash'],
            clear_tool_inputs: true,
            clear_at_least: { type: 'input_tokens', value: 2222 },
          },
          {
            type: 'compact_20260112',
            trigger: { type: 'input_tokens', value: 150000 },
            pause_after_compaction: false,
          },
        ],
      },
    },
    {
      env: {
        BATON_CONTEXT_PRESET: 'search-heavy',
        BATON_CONTEXT_TRIGGER_TOOL_USES: '7',
        BATON_CONTEXT_COMPACTION: 'on',
        BATON_CONTEXT_THINKING_KEEP: 'all',
        BATON_CONTEXT_CLEAR_MEMORY_TOOL: 'false',
      },
      sent: {
        edits: [
          { type: 'clear_thinking_20251015', keep: 'all' },
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'tool_uses', value: 7 },
            keep: { type: 'tool_uses', value: 3 },
            exclude_tools: ['memory'],
            clear_tool_inputs: false,
            clear_at_least: { type: 'input_tokens', value: 20000 },
          },
          {
            type: 'compact_20260112',
            trigger: { type: 'input_tokens', value: 150000 },
            pause_after_compaction: false,
          },
        ],
      },
    },
    {
      env: {
        BATON_CONTEXT_CLEAR_TOOL_USES: 'off',
        BATON_CONTEXT_COMPACTION: 'off',
        BATON_CONTEXT_THINKING_KEEP: 'off',
      },
      sent: undefined,
    },
  ];

  it('sets what the request carries, and the docs list no variable this leaves out', async () => {
    const docs = await readFile(
      path.resolve(
        path.dirname(fileURLToPath(import.meta.url)),
        '../../../docs/context-management.md',
      ),
      'utf8',
    );
    const documented = new Set(
      [...docs.matchAll(/^\| `(BATON_CONTEXT_[A-Z_]+)` \|/gm)].map((match) => match[1]),
    );
    // The cache variables are read back above (breakpoint TTLs, no breakpoints).
    const covered = new Set([
      'BATON_CONTEXT_PROMPT_CACHE',
      'BATON_CONTEXT_CACHE_TTL',
      ...runs.flatMap((run) => Object.keys(run.env)),
    ]);
    expect(documented.size).toBeGreaterThanOrEqual(14);
    expect([...documented].filter((name) => !covered.has(name ?? ''))).toEqual([]);

    for (const [index, run] of runs.entries()) {
      const result = await runOneSession(`every-${index}`, run.env);
      expect(result.stderr).toBe('');
      expect(result.requests.length).toBeGreaterThan(1);
      expect(result.requests[0]?.contextManagement, JSON.stringify(run.env)).toEqual(run.sent);
    }
  }, 60_000);
});

describe('the typo guard', () => {
  it('an unknown BATON_* variable gets one line on stderr naming the closest known one, and the run goes on', async () => {
    const result = await runOneSession('typo', {
      BATON_CONTEXT_PRESTE: 'off',
      BATON_SANBOX: 'off',
    });
    expect(result.code).not.toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([
      'baton run: unknown variable BATON_CONTEXT_PRESTE is ignored; did you mean BATON_CONTEXT_PRESET?',
      'baton run: unknown variable BATON_SANBOX is ignored; did you mean BATON_SANDBOX?',
    ]);
    // Ignored indeed: the default preset ran.
    expect(result.requests[0]?.contextEdits).toEqual(['clear_tool_uses_20250919']);
  });
});
