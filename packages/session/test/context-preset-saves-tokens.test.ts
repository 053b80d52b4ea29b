import { totalInputTokens } from '@baton/context-config';
import { describe, expect, it } from 'vitest';
import { runEconomySession } from '../bench/token-economy.js';

describe('token economy', () => {
  it('the coding preset sends fewer input tokens than no context editing over the same 100-turn session', async () => {
    const off = await runEconomySession('off');
    const coding = await runEconomySession('coding');
    expect(off.result.turns).toBe(coding.result.turns);
    expect(off.result.turns).toBeGreaterThanOrEqual(100);
    expect(off.turnsWithEdits).toBe(0);
    expect(coding.turnsWithEdits).toBeGreaterThan(0);
    expect(coding.result.usage.clearedInputTokens).toBeGreaterThan(0);
    expect(totalInputTokens(coding.result.usage)).toBeLessThan(totalInputTokens(off.result.usage));
    expect(coding.result.usage.costUsd).toBeLessThan(off.result.usage.costUsd);
  }, 120_000);
});
