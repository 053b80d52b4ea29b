/**
 * `pnpm bench:long-horizon`: a 200-feature project on @baton/model-sim, run session after session
 * until every feature passes, with Baton's long-horizon upkeep (orientation, progress rollover).
 * Prints input tokens per session for the first and the last 10 resume sessions and their ratio
 * (target: last <= 1.2x first), totals, USD, wall time and the final memory sizes. The baseline in
 * the same run is the same project without orientation and without rollover (every session reads
 * the whole log and checklist, paging through cut views), for BASELINE_SESSIONS sessions.
 * Both run with verified progress on and its defaults, the check record carried from session to
 * session as the session chain carries it; the table also shows the most checks one session
 * re-ran, the final session's re-runs and the time all checks took (`pnpm bench:verify` measures
 * verification against a run without it).
 *
 * Environment: BATON_BENCH_FEATURES (default 200), BATON_BENCH_BASELINE_SESSIONS (default 60,
 * 0 to skip). Results: docs/benchmarks.md.
 */
import { mkdir, mkdtemp, readdir, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createFileSystemStore } from '@baton/core';
import { startModelSim } from '@baton/model-sim';
import { runSession, type FeatureChecks, type SessionResult } from '../src/index.js';

const FEATURES = Number(process.env.BATON_BENCH_FEATURES ?? 200);
const BASELINE_SESSIONS = Number(process.env.BATON_BENCH_BASELINE_SESSIONS ?? 60);
const WINDOW = 10;

const GOAL = [
  `A long project of ${FEATURES} small features.`,
  ...Array.from({ length: FEATURES }, (_, index) => `- Greeting case ${index + 1} prints its line`),
].join('\n');

interface Run {
  label: string;
  sessions: SessionResult[];
  seconds: number;
  /** Summed duration of every check run (flip checks and re-runs), ms. */
  checkMs: number;
  memoryBytes: Record<string, number>;
}

function input(result: SessionResult): number {
  const usage = result.usage;
  return usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
}

async function sizes(root: string, prefix = ''): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) Object.assign(out, await sizes(full, `${prefix}${entry.name}/`));
    else out[`/memories/${prefix}${entry.name}`] = (await stat(full)).size;
  }
  return out;
}

async function runProject(label: string, maxSessions: number, upkeep: boolean): Promise<Run> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-bench-long-')));
  const workspace = path.join(dir, 'workspace');
  await mkdir(workspace);
  const memories = path.join(dir, 'memories');
  const store = await createFileSystemStore({ root: memories });
  const sim = await startModelSim({ port: 0 });
  const client = new Anthropic({ apiKey: 'bench', baseURL: sim.url, maxRetries: 0 });
  const sessions: SessionResult[] = [];
  let record: FeatureChecks = {};
  let checkMs = 0;
  const started = Date.now();
  try {
    for (let number = 1; number <= maxSessions; number += 1) {
      const result = await runSession({
        project: { id: 'long', goal: GOAL },
        kind: number === 1 ? 'init' : 'resume',
        store,
        workspace,
        client,
        model: 'claude-sonnet-4-6',
        sessionNumber: number,
        verification: { previous: record },
        onEvent: (event) => {
          if (event.type === 'check-passed' || event.type === 'check-failed') {
            checkMs += event.evidence.durationMs;
          }
        },
        ...(upkeep
          ? {}
          : { orientation: false as const, progressLog: { maxChars: Number.MAX_SAFE_INTEGER } }),
      });
      sessions.push(result);
      record = result.checks ?? {};
      if (result.allFeaturesPass) break;
    }
    return {
      label,
      sessions,
      seconds: (Date.now() - started) / 1000,
      checkMs,
      memoryBytes: await sizes(memories),
    };
  } finally {
    await sim.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function summarize(run: Run) {
  const resumes = run.sessions.filter((session) => session.kind === 'resume');
  const first = resumes.slice(0, WINDOW);
  const last = resumes.slice(-WINDOW);
  const mean = (list: SessionResult[]) =>
    list.reduce((sum, session) => sum + input(session), 0) / Math.max(1, list.length);
  const totals = run.sessions.reduce(
    (sum, session) => ({
      input: sum.input + input(session),
      output: sum.output + session.usage.outputTokens,
      usd: sum.usd + session.usage.costUsd,
    }),
    { input: 0, output: 0, usd: 0 },
  );
  const passing = run.sessions[run.sessions.length - 1]?.featuresAfter;
  return {
    run: run.label,
    sessions: run.sessions.length,
    features: `${passing?.passing ?? 0}/${passing?.total ?? 0}`,
    firstSessions: `${first[0] ? run.sessions.indexOf(first[0]) + 1 : '-'}-${first.length > 0 ? run.sessions.indexOf(first[first.length - 1]!) + 1 : '-'}`,
    firstMeanInput: Math.round(mean(first)),
    lastSessions: `${last[0] ? run.sessions.indexOf(last[0]) + 1 : '-'}-${last.length > 0 ? run.sessions.indexOf(last[last.length - 1]!) + 1 : '-'}`,
    lastMeanInput: Math.round(mean(last)),
    lastOverFirst: Number((mean(last) / Math.max(1, mean(first))).toFixed(3)),
    maxTurns: Math.max(...run.sessions.map((session) => session.turns)),
    totalInput: totals.input,
    totalOutput: totals.output,
    usd: Number(totals.usd.toFixed(2)),
    seconds: Number(run.seconds.toFixed(1)),
    maxReruns: Math.max(0, ...run.sessions.slice(0, -1).map((s) => s.verification?.rerun ?? 0)),
    finalReruns: run.sessions.at(-1)?.verification?.rerun ?? 0,
    checkSeconds: Number((run.checkMs / 1000).toFixed(1)),
  };
}

const runs: Run[] = [await runProject('baton', FEATURES + 10, true)];
if (BASELINE_SESSIONS > 0) {
  runs.push(await runProject('baseline (no orientation, no rollover)', BASELINE_SESSIONS, false));
}
const rows = runs.map(summarize);
console.table(rows);
for (const run of runs) {
  console.log(`final memory sizes (${run.label}):`);
  const files = Object.entries(run.memoryBytes);
  const archives = files.filter(([file]) => file.startsWith('/memories/progress/'));
  for (const [file, bytes] of files.filter(([name]) => !name.startsWith('/memories/progress/'))) {
    console.log(`  ${file.padEnd(28)} ${bytes.toLocaleString('en')} bytes`);
  }
  if (archives.length > 0) {
    const total = archives.reduce((sum, [, bytes]) => sum + bytes, 0);
    const largest = Math.max(...archives.map(([, bytes]) => bytes));
    console.log(
      `  /memories/progress/ (${archives.length} archives) ${total.toLocaleString('en')} bytes, largest ${largest.toLocaleString('en')}`,
    );
  }
}
const baton = rows[0]!;
console.log(
  `baton: last ${WINDOW} resume sessions ${baton.lastMeanInput.toLocaleString('en')} input tokens/session vs first ${WINDOW} ${baton.firstMeanInput.toLocaleString('en')} -> ratio ${baton.lastOverFirst} (target <= 1.2)`,
);
const baseline = rows[1];
if (baseline) {
  const batonSame = runs[0]!.sessions
    .filter((session) => session.kind === 'resume')
    .slice(Math.max(0, baseline.sessions - 1 - WINDOW), baseline.sessions - 1);
  const batonAtSameAge =
    batonSame.reduce((sum, session) => sum + input(session), 0) / Math.max(1, batonSame.length);
  console.log(
    `baseline: sessions ${baseline.lastSessions} ${baseline.lastMeanInput.toLocaleString('en')} input tokens/session vs first ${baseline.firstMeanInput.toLocaleString('en')} -> ratio ${baseline.lastOverFirst}; baton at the same sessions ${Math.round(batonAtSameAge).toLocaleString('en')} -> baseline/baton ${(baseline.lastMeanInput / Math.max(1, batonAtSameAge)).toFixed(2)}x`,
  );
}
