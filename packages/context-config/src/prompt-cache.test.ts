import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  BetaMessageParam,
  BetaToolUnion,
  BetaUsage,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expect, it } from 'vitest';
import { defineContextConfig } from './define-context-config.js';
import { ContextConfigError } from './errors.js';
import { CONFIG_FILE_NAME, loadContextConfig } from './load-context-config.js';
import {
  MAX_CACHE_BREAKPOINTS,
  clearingCacheCost,
  minCacheableTokens,
  withCacheBreakpoints,
} from './prompt-cache.js';
import { cacheHitRate, createUsageAccumulator } from './usage-accumulator.js';

const tools: BetaToolUnion[] = [
  { type: 'bash_20250124', name: 'bash' },
  { type: 'memory_20250818', name: 'memory' },
];

function conversation(turns: number): BetaMessageParam[] {
  const messages: BetaMessageParam[] = [{ role: 'user', content: 'start' }];
  for (let turn = 1; turn <= turns; turn += 1) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `turn ${turn}` },
        { type: 'tool_use', id: `t${turn}`, name: 'bash', input: { command: 'ls' } },
      ],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `t${turn}`, content: `out ${turn}` }],
    });
  }
  return messages;
}

/** Every block that carries a cache_control, in prompt order. */
function marks(request: ReturnType<typeof withCacheBreakpoints>): string[] {
  const found: string[] = [];
  for (const tool of request.tools ?? []) if ('cache_control' in tool) found.push('tool');
  if (Array.isArray(request.system)) {
    for (const block of request.system)
      if (block.cache_control) found.push(`system:${block.cache_control.ttl ?? '5m'}`);
  }
  request.messages.forEach((message, index) => {
    if (typeof message.content === 'string') return;
    for (const block of message.content ?? []) {
      if ('cache_control' in block && block.cache_control) found.push(`message ${index}`);
    }
  });
  return found;
}

describe('withCacheBreakpoints', () => {
  it('marks the stable prefix and the last block; the first request has nothing before', () => {
    const request = withCacheBreakpoints(
      { tools, system: 'You are a coder.', messages: conversation(0) },
      { prefixTtl: '5m' },
    );
    expect(marks(request)).toEqual(['system:5m', 'message 0']);
    expect(request.breakpoints.map((point) => point.role)).toEqual([
      'stable-prefix',
      'conversation-end',
    ]);
  });

  it('later requests also keep a breakpoint where the previous request ended (lookback)', () => {
    const messages = conversation(3);
    const request = withCacheBreakpoints({ tools, system: 'S', messages }, { prefixTtl: '1h' });
    expect(marks(request)).toEqual(['system:1h', 'message 4', 'message 6']);
    expect(request.breakpoints).toEqual([
      { role: 'stable-prefix', ttl: '1h', at: 'system' },
      { role: 'previous-end', ttl: '5m', at: 4 },
      { role: 'conversation-end', ttl: '5m', at: 6 },
    ]);
    expect(request.breakpoints.length).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
  });

  it('never mutates the request it is given', () => {
    const messages = conversation(2);
    const before = JSON.stringify(messages);
    withCacheBreakpoints({ tools, system: 'S', messages }, { prefixTtl: '5m' });
    expect(JSON.stringify(messages)).toBe(before);
  });

  it('without a system prompt the last tool carries the stable-prefix breakpoint', () => {
    const request = withCacheBreakpoints({ tools, messages: conversation(0) }, { prefixTtl: '5m' });
    expect(marks(request)).toEqual(['tool', 'message 0']);
    expect(request.tools?.[0]).not.toHaveProperty('cache_control');
  });

  it('skips thinking blocks, which cannot carry cache_control', () => {
    const request = withCacheBreakpoints(
      {
        system: 'S',
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'a' },
              { type: 'thinking', thinking: 't', signature: 's' },
            ],
          },
        ],
      },
      { prefixTtl: '5m' },
    );
    const last = request.messages[1]!.content as Array<{ type: string; cache_control?: unknown }>;
    expect(last[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(last[1]!.cache_control).toBeUndefined();
  });

  it('policy null places nothing', () => {
    const request = withCacheBreakpoints({ tools, system: 'S', messages: conversation(2) }, null);
    expect(marks(request)).toEqual([]);
    expect(request.system).toBe('S');
  });
});

describe('minimum cacheable length', () => {
  it.each([
    ['claude-opus-4-5-20251101', 4096],
    ['claude-opus-4-6', 4096],
    ['claude-haiku-4-5', 4096],
    ['claude-sonnet-4-6', 2048],
    ['claude-sonnet-4-5-20250929', 1024],
    ['claude-opus-4-1-20250805', 1024],
    ['claude-opus-4-20250514', 1024],
    ['claude-3-5-haiku-latest', 2048],
    ['sim', 512],
    ['some-new-model', 1024],
  ])('%s needs %d tokens', (model, tokens) => {
    expect(minCacheableTokens(model)).toBe(tokens);
  });
});

describe('clearing arithmetic', () => {
  it('a clear pays after rewritten x (write - read) / (cleared x read) requests', () => {
    const cost = clearingCacheCost({
      model: 'sim-sonnet',
      rewrittenInputTokens: 40_000,
      clearedInputTokens: 40_000,
    });
    // Sonnet list: write 3.75, read 0.30 per MTok.
    expect(cost.invalidationCostUsd).toBeCloseTo((40_000 * 3.45) / 1e6, 12);
    expect(cost.savedPerRequestUsd).toBeCloseTo((40_000 * 0.3) / 1e6, 12);
    expect(cost.breakEvenRequests).toBeCloseTo(11.5, 9);
    expect(
      clearingCacheCost({ model: 'sim', rewrittenInputTokens: 5, clearedInputTokens: 0 })
        .breakEvenRequests,
    ).toBe(Number.POSITIVE_INFINITY);
  });
});

function usage(fields: Partial<BetaUsage>): BetaUsage {
  return {
    cache_creation: null,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    input_tokens: 0,
    output_tokens: 0,
    server_tool_use: null,
    service_tier: null,
    ...fields,
  } as BetaUsage;
}

describe('cache accounting', () => {
  it('splits writes by TTL from usage.cache_creation and prices 1-hour writes at 2x', () => {
    const accumulator = createUsageAccumulator({ model: 'sim-sonnet' });
    const turn = accumulator.recordTurn({
      usage: usage({
        input_tokens: 100,
        output_tokens: 10,
        cache_creation_input_tokens: 3_000,
        cache_creation: { ephemeral_1h_input_tokens: 1_000, ephemeral_5m_input_tokens: 2_000 },
        cache_read_input_tokens: 5_000,
      }),
    });
    expect(turn.usage).toMatchObject({
      cacheWrite1hInputTokens: 1_000,
      cacheWrite5mInputTokens: 2_000,
    });
    expect(turn.costUsd).toBeCloseTo(
      (100 * 3 + 10 * 15 + 1_000 * 6 + 2_000 * 3.75 + 5_000 * 0.3) / 1e6,
      12,
    );
    expect(turn.uncachedCostUsd).toBeCloseTo((8_100 * 3 + 10 * 15) / 1e6, 12);
    expect(cacheHitRate(accumulator.totals())).toBeCloseTo(5_000 / 8_100, 12);
  });

  it('a turn with an applied edit carries what the clear cost in cache rewrites', () => {
    const accumulator = createUsageAccumulator({ model: 'sim-sonnet' });
    accumulator.recordTurn({
      usage: usage({
        input_tokens: 10,
        cache_read_input_tokens: 70_000,
        cache_creation_input_tokens: 10_000,
      }),
    });
    const cleared = accumulator.recordTurn({
      usage: usage({
        input_tokens: 10,
        cache_read_input_tokens: 1_000,
        cache_creation_input_tokens: 42_000,
      }),
      context_management: {
        applied_edits: [
          { type: 'clear_tool_uses_20250919', cleared_tool_uses: 9, cleared_input_tokens: 40_000 },
        ],
      },
    });
    // 80k were cached; 40k went, 1k was read again: 39k were rewritten.
    expect(cleared.cacheInvalidation?.rewrittenInputTokens).toBe(39_000);
    expect(cleared.cacheInvalidation?.costUsd).toBeCloseTo((39_000 * 3.45) / 1e6, 12);
    expect(accumulator.totals()).toMatchObject({
      cacheInvalidatedInputTokens: 39_000,
      clearedInputTokens: 40_000,
    });
    expect(accumulator.totals().cacheInvalidationCostUsd).toBeCloseTo((39_000 * 3.45) / 1e6, 12);
  });
});

describe('prompt cache config', () => {
  it('is on with a 5-minute prefix in every preset, off with false, 1h on request', () => {
    for (const preset of ['coding', 'search-heavy', 'long-horizon', 'off'] as const) {
      expect(defineContextConfig({ preset }).promptCache).toEqual({ prefixTtl: '5m' });
    }
    expect(defineContextConfig({ promptCache: false }).promptCache).toBeNull();
    const hour = defineContextConfig({ promptCache: { prefixTtl: '1h' } });
    expect(hour).toMatchObject({ preset: 'coding', promptCache: { prefixTtl: '1h' } });
  });

  it('reads BATON_CONTEXT_CACHE_TTL and BATON_CONTEXT_PROMPT_CACHE, and the file key', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-prompt-cache-'));
    try {
      const env = (values: Record<string, string>) =>
        loadContextConfig({ cwd: directory, env: values });
      expect((await env({ BATON_CONTEXT_CACHE_TTL: '1h' })).promptCache).toEqual({
        prefixTtl: '1h',
      });
      expect((await env({ BATON_CONTEXT_PROMPT_CACHE: 'off' })).promptCache).toBeNull();
      const bad = await env({ BATON_CONTEXT_CACHE_TTL: '2h' }).catch((error: unknown) => error);
      expect(bad).toBeInstanceOf(ContextConfigError);
      expect((bad as ContextConfigError).message).toContain(
        'BATON_CONTEXT_CACHE_TTL: must be 5m or 1h (got "2h")',
      );
      await writeFile(
        join(directory, CONFIG_FILE_NAME),
        JSON.stringify({ context: { promptCache: { prefixTtl: '1h' } } }),
      );
      expect((await env({})).promptCache).toEqual({ prefixTtl: '1h' });
      expect((await env({ BATON_CONTEXT_PROMPT_CACHE: 'off' })).promptCache).toBeNull();
      await writeFile(
        join(directory, CONFIG_FILE_NAME),
        JSON.stringify({ context: { promptCache: { ttl: '1h' } } }),
      );
      const unknown = await env({}).catch((error: unknown) => error);
      expect((unknown as ContextConfigError).message).toContain('context.promptCache.ttl');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
