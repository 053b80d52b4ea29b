/**
 * `pnpm bench:context`: the same 100-turn scripted session for every preset, each run with prompt
 * caching (Baton's breakpoints) and without; prints input tokens, the share read from the cache,
 * USD, the cached/uncached cost ratio per preset and each preset against `off`. Results:
 * docs/benchmarks/context.md.
 */
import { cacheHitRate, totalInputTokens } from '@baton/context-config';
import { runEconomySession } from './token-economy.js';

const turns = Number(process.env.BATON_BENCH_TURNS ?? 100);
const presets = ['off', 'coding', 'search-heavy', 'long-horizon'] as const;
interface Row {
  preset: string;
  caching: 'on' | 'off';
  turns: number;
  inputTokens: number;
  cacheReadShare: number;
  cacheWrites: number;
  clearedInputTokens: number;
  turnsWithEdits: number;
  invalidatedTokens: number;
  costUsd: number;
  seconds: number;
}
const rows: Row[] = [];
for (const preset of presets) {
  for (const promptCache of [false, true]) {
    const started = Date.now();
    const { result, turnsWithEdits } = await runEconomySession(preset, turns, { promptCache });
    const usage = result.usage;
    rows.push({
      preset,
      caching: promptCache ? 'on' : 'off',
      turns: result.turns,
      inputTokens: totalInputTokens(usage),
      cacheReadShare: Number((cacheHitRate(usage) * 100).toFixed(1)),
      cacheWrites: usage.cacheCreationInputTokens,
      clearedInputTokens: usage.clearedInputTokens,
      turnsWithEdits,
      invalidatedTokens: usage.cacheInvalidatedInputTokens,
      costUsd: Number(usage.costUsd.toFixed(4)),
      seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
    });
  }
}
console.table(rows);
const find = (preset: string, caching: string) =>
  rows.find((row) => row.preset === preset && row.caching === caching)!;
for (const preset of presets) {
  const cached = find(preset, 'on');
  const uncached = find(preset, 'off');
  console.log(
    `${preset}: ${cached.cacheReadShare}% of ${cached.inputTokens.toLocaleString('en')} input tokens read from cache; $${cached.costUsd} with caching vs $${uncached.costUsd} without -> ratio ${(cached.costUsd / uncached.costUsd).toFixed(3)}`,
  );
}
const offCached = find('off', 'on');
for (const preset of presets.filter((name) => name !== 'off')) {
  const cached = find(preset, 'on');
  console.log(
    `${preset} vs off, both cached: $${cached.costUsd} vs $${offCached.costUsd} -> ratio ${(cached.costUsd / offCached.costUsd).toFixed(3)}; input tokens ${(cached.inputTokens / offCached.inputTokens).toFixed(3)}`,
  );
}
