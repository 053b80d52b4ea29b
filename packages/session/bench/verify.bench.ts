/**
 * `pnpm bench:verify`: what verified progress costs. The same 200-feature project on
 * @baton/model-sim runs twice, session after session until every feature passes, the two runs
 * interleaved session by session so machine load falls on both alike:
 * - **verification on**: the defaults (each flip's check runs in the sandbox before the write is
 *   accepted; the end-of-session re-run of at most 10 passing features' checks, least recently
 *   verified first, within 60 s), the check record carried from session to session as the
 *   session chain carries it;
 * - **baseline, verification off** (`verification: false`): flips taken on the model's word.
 * Prints sessions, wall time, mean session time, the time spent in checks per session (flip checks
 * and re-runs, from the evidence: at most the budget, but in the final session, which runs every
 * check), checks run, mean check time, and the ratios on/off. Results: docs/benchmarks.md.
 *
 * Environment: BATON_BENCH_FEATURES (default 200).
 */
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createFileSystemStore, type FileSystemStore } from '@baton/core';
import { startModelSim, type ModelSim } from '@baton/model-sim';
import {
  DEFAULT_REGRESSION_BUDGET_MS,
  runSession,
  type FeatureChecks,
  type SessionEvent,
  type SessionResult,
} from '../src/index.js';

const FEATURES = Number(process.env.BATON_BENCH_FEATURES ?? 200);
const GOAL = [
  `A long project of ${FEATURES} small features.`,
  ...Array.from({ length: FEATURES }, (_, index) => `- Greeting case ${index + 1} prints its line`),
].join('\n');

/** One session as measured: its wall time and the checks it ran. */
interface Measured {
  result: SessionResult;
  ms: number;
  /** Checks run (flip checks and re-runs) and their summed duration. */
  checks: number;
  checkMs: number;
}

interface Project {
  label: string;
  verify: boolean;
  dir: string;
  workspace: string;
  store: FileSystemStore;
  sim: ModelSim;
  client: Anthropic;
  record: FeatureChecks;
  sessions: Measured[];
  done: boolean;
  sandbox: string;
}

async function openProject(label: string, verify: boolean): Promise<Project> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-bench-verify-')));
  const workspace = path.join(dir, 'workspace');
  await mkdir(workspace);
  const store = await createFileSystemStore({ root: path.join(dir, 'memories') });
  const sim = await startModelSim({ port: 0 });
  const client = new Anthropic({ apiKey: 'bench', baseURL: sim.url, maxRetries: 0 });
  return {
    label,
    verify,
    dir,
    workspace,
    store,
    sim,
    client,
    record: {},
    sessions: [],
    done: false,
    sandbox: '?',
  };
}

async function closeProject(project: Project): Promise<void> {
  await project.sim.close();
  await project.store.close();
  await rm(project.dir, { recursive: true, force: true });
}

async function runOne(project: Project, sessionNumber: number): Promise<void> {
  const checkRuns: number[] = [];
  const onEvent = (event: SessionEvent) => {
    if (event.type === 'check-passed' || event.type === 'check-failed') {
      checkRuns.push(event.evidence.durationMs);
    }
    if (event.type === 'session-start') project.sandbox = event.sandbox.mode;
  };
  const started = performance.now();
  const result = await runSession({
    project: { id: 'verify', goal: GOAL },
    kind: sessionNumber === 1 ? 'init' : 'resume',
    store: project.store,
    workspace: project.workspace,
    client: project.client,
    model: 'claude-sonnet-4-6',
    sessionNumber,
    onEvent,
    verification: project.verify ? { previous: project.record } : false,
  });
  const ms = performance.now() - started;
  project.record = result.checks ?? {};
  project.sessions.push({
    result,
    ms,
    checks: checkRuns.length,
    checkMs: checkRuns.reduce((sum, duration) => sum + duration, 0),
  });
  project.done = result.allFeaturesPass && (result.verification?.pending ?? 0) === 0;
}

function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;
}

function summarize(project: Project) {
  const sessions = project.sessions;
  const wallMs = sessions.reduce((sum, session) => sum + session.ms, 0);
  const checks = sessions.reduce((sum, session) => sum + session.checks, 0);
  const checkMs = sessions.reduce((sum, session) => sum + session.checkMs, 0);
  const beforeLast = sessions.slice(0, -1).map((session) => session.checkMs);
  const last = sessions.at(-1);
  return {
    run: project.label,
    sandbox: project.sandbox,
    sessions: sessions.length,
    features: `${last?.result.featuresAfter.passing ?? 0}/${last?.result.featuresAfter.total ?? 0}`,
    wallS: Number((wallMs / 1000).toFixed(1)),
    meanSessionMs: Math.round(wallMs / Math.max(1, sessions.length)),
    checks,
    meanCheckMs: checks === 0 ? 0 : Math.round(checkMs / checks),
    checkMsPerSessionP50: Math.round(percentile(beforeLast, 0.5)),
    checkMsPerSessionMax: Math.round(Math.max(0, ...beforeLast)),
    finalSessionChecks: last?.checks ?? 0,
    finalSessionCheckMs: Math.round(last?.checkMs ?? 0),
    maxReruns: Math.max(0, ...sessions.slice(0, -1).map((s) => s.result.verification?.rerun ?? 0)),
  };
}

const load = loadavg().map((value) => value.toFixed(1));
console.log(`bench:verify: ${FEATURES} features; load average at start ${load.join(' ')}`);
const on = await openProject('verification on (defaults)', true);
const off = await openProject('baseline: verification off', false);
try {
  for (let number = 1; number <= FEATURES + 10 && !(on.done && off.done); number += 1) {
    if (!off.done) await runOne(off, number);
    if (!on.done) await runOne(on, number);
    if (number % 25 === 0) {
      console.log(
        `  session ${number}: on ${on.done ? 'done' : 'running'}, off ${off.done ? 'done' : 'running'}`,
      );
    }
  }
} finally {
  await closeProject(on);
  await closeProject(off);
}
const rows = [summarize(on), summarize(off)];
console.table(rows);
const [withChecks, without] = rows as [ReturnType<typeof summarize>, ReturnType<typeof summarize>];
const flips = FEATURES;
console.log(
  [
    `wall time on/off: ${(withChecks.wallS / Math.max(0.001, without.wallS)).toFixed(2)}x (${withChecks.wallS} s vs ${without.wallS} s)`,
    `sessions on/off: ${withChecks.sessions} vs ${without.sessions}`,
    `mean session on/off: ${(withChecks.meanSessionMs / Math.max(1, without.meanSessionMs)).toFixed(2)}x`,
    `overhead per feature: ${Math.round(((withChecks.wallS - without.wallS) * 1000) / flips)} ms (wall difference / ${flips} features: its flip check and its share of the re-runs)`,
    `time in checks per session (all but the last): p50 ${withChecks.checkMsPerSessionP50} ms, max ${withChecks.checkMsPerSessionMax} ms; budget ${DEFAULT_REGRESSION_BUDGET_MS} ms for the re-run (${withChecks.checkMsPerSessionMax <= DEFAULT_REGRESSION_BUDGET_MS ? 'within' : 'OVER'})`,
    `final session: ${withChecks.finalSessionChecks} checks in ${withChecks.finalSessionCheckMs} ms (every passing feature re-verified before completion)`,
    `load average at end ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}`,
  ].join('\n'),
);
