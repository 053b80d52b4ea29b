import type { BetaMessage, BetaUsage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, estimateCostUsd, isSimulatedModel, priceForModel } from './prices.js';
import { accountTurn, createUsageAccumulator, emptyUsageTotals } from './usage-accumulator.js';

function usage(fields: Partial<BetaUsage>): BetaUsage {
  return {
    cache_creation: null,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    fallback_credit: null,
    inference_geo: null,
    input_tokens: 0,
    iterations: null,
    output_tokens: 0,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: null,
    speed: null,
    ...fields,
  };
}

describe('estimateCostUsd', () => {
  it('prices every usage field per million tokens', () => {
    const cost = estimateCostUsd(
      'claude-sonnet-4-5',
      usage({
        input_tokens: 1_000_000,
        output_tokens: 1_000_000,
        cache_read_input_tokens: 1_000_000,
        cache_creation_input_tokens: 1_000_000,
      }),
    );
    expect(cost).toBeCloseTo(3 + 15 + 0.3 + 3.75, 10);
  });

  it('uses the TTL breakdown for 1-hour cache writes', () => {
    const cost = estimateCostUsd(
      'claude-sonnet-4-5',
      usage({
        cache_creation_input_tokens: 1_000_000,
        cache_creation: { ephemeral_1h_input_tokens: 400_000, ephemeral_5m_input_tokens: 600_000 },
      }),
    );
    expect(cost).toBeCloseTo(0.6 * 3.75 + 0.4 * 6, 10);
  });

  it.each([
    ['claude-opus-4-1-20250805', 15, 75, 18.75, 1.5],
    ['claude-opus-4-20250514', 15, 75, 18.75, 1.5],
    ['claude-opus-4-5-20251101', 5, 25, 6.25, 0.5],
    ['claude-opus-5', 5, 25, 6.25, 0.5],
    ['claude-sonnet-4-5-20250929', 3, 15, 3.75, 0.3],
    ['claude-sonnet-5', 3, 15, 3.75, 0.3],
    ['claude-haiku-4-5-20251001', 1, 5, 1.25, 0.1],
    ['claude-3-5-haiku-20241022', 0.8, 4, 1, 0.08],
    ['claude-3-haiku-20240307', 0.25, 1.25, 0.3, 0.03],
  ])(
    '%s is priced by its family (input %d, output %d, write %d, read %d)',
    (model, input, output, write, read) => {
      expect(priceForModel(model)).toEqual({
        inputPerMTok: input,
        outputPerMTok: output,
        cacheWritePerMTok: write,
        cacheReadPerMTok: read,
      });
    },
  );

  it('the simulator model costs 0, sim-sonnet and unknown models cost like Sonnet', () => {
    expect(estimateCostUsd('sim', usage({ input_tokens: 1_000_000, output_tokens: 1_000 }))).toBe(
      0,
    );
    expect(priceForModel('sim-small-context').inputPerMTok).toBe(0);
    expect(priceForModel('sim-sonnet')).toEqual(DEFAULT_PRICES['claude-sonnet']);
    expect(priceForModel('some-new-model')).toEqual(DEFAULT_PRICES['claude-sonnet']);
    expect(estimateCostUsd('sim-sonnet', usage({ input_tokens: 1_000_000 }))).toBeCloseTo(3, 10);
    expect([isSimulatedModel('sim'), isSimulatedModel('sim-sonnet')]).toEqual([true, true]);
    expect([isSimulatedModel('claude-sonnet-4-6'), isSimulatedModel('sim-x')]).toEqual([
      false,
      false,
    ]);
  });

  it('a price table override wins and is merged over the defaults', () => {
    const prices = {
      sim: { inputPerMTok: 100, outputPerMTok: 0, cacheWritePerMTok: 0, cacheReadPerMTok: 0 },
    };
    expect(estimateCostUsd('sim', usage({ input_tokens: 10_000 }), prices)).toBeCloseTo(1, 10);
    expect(priceForModel('claude-haiku-4-5', prices).inputPerMTok).toBe(1);
    const fallback = {
      default: { inputPerMTok: 7, outputPerMTok: 0, cacheWritePerMTok: 0, cacheReadPerMTok: 0 },
    };
    expect(priceForModel('mystery', fallback).inputPerMTok).toBe(7);
  });
});

describe('createUsageAccumulator', () => {
  const response = (fields: Partial<BetaUsage>, edits?: BetaMessage['context_management']) => ({
    usage: usage(fields),
    context_management: edits ?? null,
  });

  it('starts at zero', () => {
    expect(createUsageAccumulator({ model: 'sim-sonnet' }).totals()).toEqual(emptyUsageTotals());
  });

  it('adds usage and applied edits of every turn into running totals', () => {
    const accumulator = createUsageAccumulator({ model: 'sim-sonnet' });
    const first = accumulator.recordTurn(
      response({ input_tokens: 1_000, output_tokens: 200, cache_creation_input_tokens: 800 }),
    );
    expect(first).toEqual({
      usage: {
        inputTokens: 1_000,
        outputTokens: 200,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 800,
        cacheWrite5mInputTokens: 800,
        cacheWrite1hInputTokens: 0,
      },
      appliedEdits: [],
      clearedInputTokens: 0,
      clearedToolUses: 0,
      clearedThinkingTurns: 0,
      cacheInvalidation: null,
      costUsd: (1_000 * 3 + 200 * 15 + 800 * 3.75) / 1_000_000,
      uncachedCostUsd: (1_800 * 3 + 200 * 15) / 1_000_000,
    });
    const second = accumulator.recordTurn(
      response(
        { input_tokens: 500, output_tokens: 100, cache_read_input_tokens: 700 },
        {
          applied_edits: [
            {
              type: 'clear_thinking_20251015',
              cleared_thinking_turns: 2,
              cleared_input_tokens: 300,
            },
            { type: 'clear_tool_uses_20250919', cleared_tool_uses: 4, cleared_input_tokens: 9_000 },
          ],
        },
      ),
    );
    expect(second.clearedInputTokens).toBe(9_300);
    expect(second.clearedToolUses).toBe(4);
    expect(second.clearedThinkingTurns).toBe(2);
    expect(second.appliedEdits).toHaveLength(2);
    const totals = accumulator.totals();
    expect(totals).toMatchObject({
      turns: 2,
      inputTokens: 1_500,
      outputTokens: 300,
      cacheReadInputTokens: 700,
      cacheCreationInputTokens: 800,
      clearedInputTokens: 9_300,
      clearedToolUses: 4,
      clearedThinkingTurns: 2,
    });
    expect(totals.costUsd).toBeCloseTo(first.costUsd + second.costUsd, 12);
  });

  it('totals() returns a copy', () => {
    const accumulator = createUsageAccumulator({ model: 'sim-sonnet' });
    accumulator.totals().turns = 5;
    expect(accumulator.totals().turns).toBe(0);
  });

  it('uses the model and price override it was created with', () => {
    const accumulator = createUsageAccumulator({
      model: 'claude-haiku-4-5',
      prices: {
        'claude-haiku-4-5': {
          inputPerMTok: 2,
          outputPerMTok: 0,
          cacheWritePerMTok: 0,
          cacheReadPerMTok: 0,
        },
      },
    });
    expect(accumulator.recordTurn(response({ input_tokens: 1_000_000 })).costUsd).toBeCloseTo(
      2,
      10,
    );
  });

  it('reads a response without context_management (absent or null)', () => {
    expect(
      accountTurn({ usage: { input_tokens: 1, output_tokens: 2 } }, 'sim-sonnet'),
    ).toMatchObject({
      appliedEdits: [],
      clearedInputTokens: 0,
      usage: {
        inputTokens: 1,
        outputTokens: 2,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      },
    });
  });
});
