/**
 * `pnpm bench:context`: the same 100-turn scripted session with the `coding` preset and with
 * context editing `off`; prints both input-token totals and the ratio. Results: docs/benchmarks/context.md.
 */
import { runEconomySession } from './token-economy.js';

const turns = Number(process.env.BATON_BENCH_TURNS ?? 100);
const rows = [];
for (const preset of ['off', 'coding', 'search-heavy', 'long-horizon'] as const) {
  const started = Date.now();
  const { result, turnsWithEdits } = await runEconomySession(preset, turns);
  rows.push({
    preset,
    turns: result.turns,
    inputTokens: result.usage.inputTokens,
    clearedInputTokens: result.usage.clearedInputTokens,
    turnsWithEdits,
    costUsd: Number(result.usage.costUsd.toFixed(4)),
    seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
  });
}
console.table(rows);
const off = rows.find((row) => row.preset === 'off')!;
for (const row of rows.filter((candidate) => candidate.preset !== 'off')) {
  console.log(
    `${row.preset}: ${row.inputTokens.toLocaleString('en')} input tokens vs ${off.inputTokens.toLocaleString('en')} with off -> ratio ${(row.inputTokens / off.inputTokens).toFixed(3)} (${((1 - row.inputTokens / off.inputTokens) * 100).toFixed(1)}% fewer)`,
  );
}
