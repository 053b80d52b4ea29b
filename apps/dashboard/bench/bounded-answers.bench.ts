/**
 * `pnpm bench:dashboard-bounds`: the list and stream answers at fleet scale, over HTTP (no
 * browser), against a private Redis prefix seeded through the control API.
 *
 * Two fleets of BATON_BENCH_PROJECTS (1,500) projects in one run: the baseline's goals are one
 * line, the measured fleet's are 100,000 characters (the largest goal accepted). For each:
 * - `GET /api/projects?limit=500`: bytes and latency (p50/p95 of 20 sequential requests);
 * - eight such requests at once, four rounds: wall time and p95;
 * - `/livez` latency (p95 of 40 probes) while those eight-at-once rounds run, against idle;
 * - the `/api/stream` snapshot: bytes and time to the first message.
 * Ratios long/short show what the goal length costs (1.0 = nothing). Prints `uptime` with them.
 */
import { execFileSync } from 'node:child_process';
import { createBatonControl, type BatonControl } from '@baton/projects';
import { deletePrefix, randomHex, REDIS_URL } from '@baton/test-support';
import { pino } from 'pino';
import { inParallel } from './in-parallel.js';
import { createDashboardServer, type DashboardServer } from '../src/index.js';

const PROJECTS = Number(process.env.BATON_BENCH_PROJECTS ?? 1_500);
const IN_FLIGHT = 50;

interface Fleet {
  prefix: string;
  control: BatonControl;
  server: DashboardServer;
}

async function startFleet(goalCharacters: number): Promise<Fleet> {
  const prefix = `{bench-bounds-${randomHex(4)}}`;
  const control = createBatonControl({ url: REDIS_URL, prefix });
  const ids = Array.from({ length: PROJECTS }, (_, index) => `p-${String(index).padStart(5, '0')}`);
  await inParallel(
    ids,
    (id) => {
      const head = `Fleet project ${id}\n- one feature\n`;
      const goal = (head + '- a feature with a long description\n'.repeat(3_000)).slice(
        0,
        Math.max(head.length, goalCharacters),
      );
      return control.createProject({ id, goal });
    },
    IN_FLIGHT,
  );
  const server = await createDashboardServer({
    control,
    port: 0,
    token: '',
    logger: pino({ level: 'silent' }),
    onError: () => undefined,
  });
  return { prefix, control, server };
}

async function stopFleet(fleet: Fleet): Promise<void> {
  await fleet.server.close();
  await fleet.control.close();
  await deletePrefix(fleet.prefix);
  await deletePrefix(`${fleet.control.keys.memoryPrefix}:`);
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? NaN;
}

async function timed(url: string): Promise<{ ms: number; bytes: number; status: number }> {
  const started = performance.now();
  const response = await fetch(url);
  const bytes = (await response.arrayBuffer()).byteLength;
  return { ms: performance.now() - started, bytes, status: response.status };
}

async function firstStreamMessage(url: string): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  const reader = response.body!.getReader();
  let text = '';
  // The snapshot is the first message: read until its blank line.
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const ms = performance.now() - started;
  controller.abort();
  return { ms, bytes: Buffer.byteLength(text.slice(0, text.indexOf('\n\n'))) };
}

interface Measured {
  listBytes: number;
  listP50: number;
  listP95: number;
  burstWall: number;
  burstP95: number;
  livezIdleP95: number;
  livezLoadedP95: number;
  streamBytes: number;
  streamMs: number;
}

async function measure(fleet: Fleet): Promise<Measured> {
  const list = `${fleet.server.url}/api/projects?limit=500`;
  const livez = `${fleet.server.url}/livez`;
  await timed(list); // warm up
  const sequential: number[] = [];
  let listBytes = 0;
  for (let index = 0; index < 20; index++) {
    const result = await timed(list);
    if (result.status !== 200) throw new Error(`list answered ${result.status}`);
    sequential.push(result.ms);
    listBytes = result.bytes;
  }
  const idle: number[] = [];
  for (let index = 0; index < 40; index++) idle.push((await timed(livez)).ms);

  const burst: number[] = [];
  const loaded: number[] = [];
  let loading = true;
  const probes = (async () => {
    while (loading) loaded.push((await timed(livez)).ms);
  })();
  const burstStarted = performance.now();
  for (let round = 0; round < 4; round++) {
    const results = await Promise.all(Array.from({ length: 8 }, () => timed(list)));
    burst.push(...results.map((result) => result.ms));
  }
  const burstWall = performance.now() - burstStarted;
  loading = false;
  await probes;
  const stream = await firstStreamMessage(`${fleet.server.url}/api/stream`);
  return {
    listBytes,
    listP50: percentile(sequential, 0.5),
    listP95: percentile(sequential, 0.95),
    burstWall,
    burstP95: percentile(burst, 0.95),
    livezIdleP95: percentile(idle, 0.95),
    livezLoadedP95: percentile(loaded, 0.95),
    streamBytes: stream.bytes,
    streamMs: stream.ms,
  };
}

const load = execFileSync('uptime', { encoding: 'utf8' }).trim();
const results: Record<'short' | 'long', Measured> = {} as Record<'short' | 'long', Measured>;
for (const [name, characters] of [
  ['short', 0],
  ['long', 100_000],
] as const) {
  const fleet = await startFleet(characters);
  try {
    results[name] = await measure(fleet);
  } finally {
    await stopFleet(fleet);
  }
}
const rows: Array<[string, keyof Measured, string]> = [
  ['GET /api/projects?limit=500 bytes', 'listBytes', 'B'],
  ['  p50 (20 sequential)', 'listP50', 'ms'],
  ['  p95 (20 sequential)', 'listP95', 'ms'],
  ['8 at once x 4 rounds, wall', 'burstWall', 'ms'],
  ['8 at once x 4 rounds, p95', 'burstP95', 'ms'],
  ['/livez p95 idle', 'livezIdleP95', 'ms'],
  ['/livez p95 during the rounds', 'livezLoadedP95', 'ms'],
  ['/api/stream snapshot bytes', 'streamBytes', 'B'],
  ['/api/stream snapshot time', 'streamMs', 'ms'],
];
console.log(
  `${PROJECTS} projects; baseline: one-line goals (short); measured: 100,000-character goals (long)`,
);
console.log(`load: ${load}`);
console.log('| measure | short (baseline) | long | long/short |');
console.log('|---|---|---|---|');
for (const [label, key, unit] of rows) {
  const short = results.short[key];
  const long = results.long[key];
  const format = (value: number) =>
    unit === 'B' ? `${Math.round(value).toLocaleString('en')} B` : `${value.toFixed(1)} ms`;
  console.log(`| ${label} | ${format(short)} | ${format(long)} | ${(long / short).toFixed(2)} |`);
}
