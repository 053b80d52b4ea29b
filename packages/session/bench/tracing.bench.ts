/**
 * `pnpm --filter @baton/session bench:tracing`: what traces cost a session. Runs the same resume
 * session on @baton/model-sim again and again, interleaving three wirings:
 *   before - `onEvent` as the apps had it before traces (the named baseline);
 *   off    - the apps' wiring with OTEL_EXPORTER_OTLP_ENDPOINT unset: `startOtlpTracing` returns
 *            undefined, nothing of OpenTelemetry is loaded, `traces?.tracing.record` is skipped;
 *   on     - spans built from every event into the SDK (BatchSpanProcessor, in-memory exporter).
 * Prints the median session wall time of each and the ratios to `before`.
 * Environment: BATON_BENCH_ROUNDS (default 15). Results: docs/benchmarks.md.
 */
import { cp, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createFileSystemStore } from '@baton/core';
import { startModelSim } from '@baton/model-sim';
import {
  runSession,
  startOtlpTracing,
  type OtlpTracing,
  type SessionEvent,
  type SessionTracing,
} from '../src/index.js';

const ROUNDS = Number(process.env.BATON_BENCH_ROUNDS ?? 15);
const GOAL = [
  'A tiny todo command line app.',
  '- Add a todo with a title',
  '- List todos',
  '- Mark a todo as done',
].join('\n');

const root = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-bench-tracing-')));
const sim = await startModelSim({ port: 0 });
const client = new Anthropic({ apiKey: 'bench', baseURL: sim.url, maxRetries: 0 });

/** Memory of a freshly initialised project, copied for every measured session. */
async function initialisedMemory(): Promise<string> {
  const dir = path.join(root, 'template');
  await mkdir(path.join(dir, 'workspace'), { recursive: true });
  const store = await createFileSystemStore({ root: path.join(dir, 'memories') });
  const result = await runSession({
    project: { id: 'todo', goal: GOAL },
    kind: 'init',
    store,
    workspace: path.join(dir, 'workspace'),
    client,
    model: 'sim',
  });
  await store.close();
  if (result.outcome !== 'completed') throw new Error(`init failed: ${result.reason}`);
  return path.join(dir, 'memories');
}

let counter = 0;
async function session(template: string, onEvent: (event: SessionEvent) => void): Promise<number> {
  const dir = path.join(root, `run-${(counter += 1)}`);
  await mkdir(path.join(dir, 'workspace'), { recursive: true });
  await cp(template, path.join(dir, 'memories'), { recursive: true });
  const store = await createFileSystemStore({ root: path.join(dir, 'memories') });
  const started = performance.now();
  const result = await runSession({
    project: { id: 'todo', goal: GOAL },
    kind: 'resume',
    sessionNumber: 2,
    store,
    workspace: path.join(dir, 'workspace'),
    client,
    model: 'sim',
    onEvent,
  });
  const elapsed = performance.now() - started;
  await store.close();
  await rm(dir, { recursive: true, force: true });
  if (result.outcome !== 'completed') throw new Error(`session failed: ${result.reason}`);
  return elapsed;
}

async function tracingOn(): Promise<{ tracing: SessionTracing; spans: () => Promise<number> }> {
  const [
    { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter },
    { createSessionTracing },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('../src/tracing/index.js'),
  ]);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  return {
    tracing: createSessionTracing({ tracer: provider.getTracer('bench') }),
    spans: async () => {
      await provider.forceFlush();
      return exporter.getFinishedSpans().length;
    },
  };
}

/** What `baton run` and the worker do with each event: traces if on, then their own work. */
function appWiring(traces: OtlpTracing | undefined, publish: (event: SessionEvent) => void) {
  return (event: SessionEvent) => {
    traces?.tracing.record(event);
    publish(event);
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

const template = await initialisedMemory();
/** Each wiring with the baseline sessions measured in the same rounds, interleaved with it. */
const times = {
  before: [] as number[],
  off: [] as number[],
  beforeOn: [] as number[],
  on: [] as number[],
};
// Off is measured before anything of OpenTelemetry is imported into this process.
const off: OtlpTracing | undefined = await startOtlpTracing({ env: {}, serviceName: 'bench' });
if (off !== undefined) throw new Error('tracing is on without an endpoint');
const warm = await session(template, () => undefined);
void warm;
for (let round = 0; round < ROUNDS; round += 1) {
  const events: SessionEvent[] = [];
  times.before.push(await session(template, (event) => void events.push(event)));
  times.off.push(
    await session(
      template,
      appWiring(off, (event) => void events.push(event)),
    ),
  );
}
const on = await tracingOn();
for (let round = 0; round < ROUNDS; round += 1) {
  const events: SessionEvent[] = [];
  times.beforeOn.push(await session(template, (event) => void events.push(event)));
  times.on.push(
    await session(template, (event) => {
      on.tracing.record(event);
      events.push(event);
    }),
  );
}
const line = (name: string, values: number[], baseline: number[]) =>
  console.log(
    `${name.padEnd(4)} median ${median(values).toFixed(1)} ms vs before ${median(baseline).toFixed(1)} ms (${values.length} sessions each, interleaved): ${(median(values) / median(baseline)).toFixed(3)}x`,
  );
console.log(
  `tracing bench: ${ROUNDS} rounds, load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
line('off', times.off, times.before);
line('on', times.on, times.beforeOn);
console.log(`spans built with tracing on: ${await on.spans()}`);
await sim.close();
await rm(root, { recursive: true, force: true });
