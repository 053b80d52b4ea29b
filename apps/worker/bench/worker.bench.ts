/**
 * Benchmark of the worker (not a test). Run: `pnpm bench:worker` from the repo root (or
 * `pnpm bench` here). Needs Redis at REDIS_URL (default redis://127.0.0.1:6379).
 *
 * In one run:
 * 1. Throughput: BENCH_PROJECTS (default 200) projects x 3 short sessions (init + 2 resumes) on
 *    the simulator (zero latency) through ONE worker process (`node dist/main.js`) at
 *    concurrency 16: sessions/s, per-session worker overhead (claim -> release minus the
 *    session's own time), per-turn session harness overhead (session time minus model time and
 *    tool time, divided by turns), p50/p95, and the worker's peak RSS.
 * 2. The floor: a bare BullMQ worker with a no-op processor over the same number of jobs at the
 *    same concurrency, in this process.
 *    BENCH_CONCURRENCY (default 16) sets the worker's concurrency; at 1 the per-turn time excluding
 *    model and tool time is the harness's own overhead (no waiting behind other sessions).
 * 3. Idle sessions: BENCH_IDLE (default 200) sessions held open at once (simulator latency 5 s,
 *    worker concurrency = BENCH_IDLE): the worker's RSS while they all wait.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startModelSim } from '@baton/model-sim';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createBatonControl, type BatonControl, type EventEntry } from '@baton/projects';
import setup from '../test/support/global-setup.js';
import { deletePrefix, waitFor } from '@baton/test-support';
import { randomPrefix } from '../test/support/redis.js';
import { simWorkerEnv, spawnWorker, type WorkerProcess } from '../test/support/worker-process.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 200);
const IDLE = Number(process.env.BENCH_IDLE ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** CPU time (user + system) of a process in ms, from /proc (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const fmt = (value: number, digits = 2) => value.toFixed(digits);

async function cleanup(control: BatonControl, ids: string[], prefix: string) {
  for (const id of ids) await control.deleteProject(id).catch(() => undefined);
  await control.close();
  await deletePrefix(prefix, REDIS_URL);
}

async function throughput(home: string) {
  const sim = await startModelSim({ port: 0 });
  const prefix = randomPrefix();
  const control = createBatonControl({ url: REDIS_URL, prefix });
  const ids = Array.from(
    { length: PROJECTS },
    (_, index) => `bench-${index}-${Date.now().toString(36)}`,
  );
  let worker: WorkerProcess | undefined;
  try {
    worker = await spawnWorker(
      simWorkerEnv(
        { prefix, simUrl: sim.url },
        { BATON_CONCURRENCY: String(CONCURRENCY), BATON_MODEL_RPS: '0', BATON_HOME: home },
      ),
    );
    for (const id of ids)
      await control.createProject({ id, goal: `Bench ${id}\n- first\n- second` });
    const cpuBefore = cpuMsOf(worker.child.pid!);
    const started = Date.now();
    for (const id of ids) await control.enqueue(id);
    let peakMb = 0;
    await waitFor(
      'every bench project completed',
      async () => {
        peakMb = Math.max(peakMb, memoryOf(worker!.child.pid!).peakMb);
        const projects = await control.listProjects();
        const failed = projects.find((project) => project.status === 'failed');
        if (failed) throw new Error(`${failed.id} failed: ${failed.statusReason}`);
        return projects.filter((project) => project.status === 'completed').length === ids.length;
      },
      30 * 60_000,
      500,
    );
    const seconds = (Date.now() - started) / 1000;
    const cpuMs = cpuMsOf(worker.child.pid!) - cpuBefore;
    peakMb = Math.max(peakMb, memoryOf(worker.child.pid!).peakMb);

    const workerOverhead: number[] = [];
    const turnOverhead: number[] = [];
    let sessions = 0;
    let turns = 0;
    for (const id of ids) {
      const entries: EventEntry[] = await control.readEvents(id, { count: 100_000 });
      const bySession = new Map<
        string,
        {
          claimed?: number;
          released?: number;
          model: number;
          tools: number;
          turns: number;
          start?: number;
          end?: number;
        }
      >();
      const of = (sessionId: string) => {
        let record = bySession.get(sessionId);
        if (!record) bySession.set(sessionId, (record = { model: 0, tools: 0, turns: 0 }));
        return record;
      };
      for (const { event } of entries) {
        const sessionId = 'sessionId' in event ? event.sessionId : '';
        if (event.type === 'session-claimed') of(sessionId).claimed = event.at;
        else if (event.type === 'session-released') of(sessionId).released = event.at;
        else if (event.type === 'turn') {
          of(sessionId).model += Number(event.durationMs);
          of(sessionId).turns += 1;
        } else if (event.type === 'tool-call') of(sessionId).tools += Number(event.durationMs);
        else if (event.type === 'session-end') {
          const result = event.result as { startedAt: number; endedAt: number };
          of(sessionId).start = result.startedAt;
          of(sessionId).end = result.endedAt;
        }
      }
      for (const record of bySession.values()) {
        if (record.start === undefined || record.end === undefined) continue;
        sessions += 1;
        turns += record.turns;
        const sessionMs = record.end - record.start;
        if (record.claimed !== undefined && record.released !== undefined) {
          workerOverhead.push(record.released - record.claimed - sessionMs);
        }
        if (record.turns > 0)
          turnOverhead.push(Math.max(0, sessionMs - record.model - record.tools) / record.turns);
      }
    }
    return {
      seconds,
      sessions,
      turns,
      peakMb,
      cpuMs,
      workerOverhead,
      turnOverhead,
      simRequests: sim.requests,
    };
  } finally {
    worker?.kill('SIGKILL');
    if (worker) await worker.exited;
    await cleanup(control, ids, prefix);
    await sim.close();
  }
}

async function bareBullmq(jobs: number) {
  const prefix = randomPrefix();
  const producer = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const consumer = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('bench-noop', { connection: producer, prefix });
  let done = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const worker = new Worker('bench-noop', async () => null, {
    connection: consumer,
    prefix,
    concurrency: CONCURRENCY,
    autorun: false,
  });
  worker.on('completed', () => {
    done += 1;
    if (done === jobs) finish();
  });
  try {
    const started = Date.now();
    await queue.addBulk(
      Array.from({ length: jobs }, (_, index) => ({ name: 'noop', data: { index } })),
    );
    void worker.run();
    await finished;
    return { seconds: (Date.now() - started) / 1000 };
  } finally {
    await worker.close();
    await queue.close();
    producer.disconnect();
    consumer.disconnect();
    await deletePrefix(prefix, REDIS_URL);
  }
}

async function idleSessions(home: string) {
  const sim = await startModelSim({ port: 0, faults: { latencyMs: 5000 } });
  const prefix = randomPrefix();
  const control = createBatonControl({ url: REDIS_URL, prefix });
  const ids = Array.from(
    { length: IDLE },
    (_, index) => `idle-${index}-${Date.now().toString(36)}`,
  );
  let worker: WorkerProcess | undefined;
  try {
    worker = await spawnWorker(
      simWorkerEnv(
        { prefix, simUrl: sim.url },
        { BATON_CONCURRENCY: String(IDLE), BATON_MODEL_RPS: '0', BATON_HOME: home },
      ),
    );
    const before = memoryOf(worker.child.pid!);
    for (const id of ids) {
      await control.createProject({ id, goal: `Idle ${id}\n- only` });
      await control.enqueue(id);
    }
    await waitFor(
      `${IDLE} sessions running at once`,
      async () => (await control.listProjects({ status: 'running' })).length === IDLE,
      5 * 60_000,
      250,
    );
    // Let every session reach its (slow) first model call.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const during = memoryOf(worker.child.pid!);
    return { before, during };
  } finally {
    worker?.kill('SIGKILL');
    if (worker) await worker.exited;
    await cleanup(control, ids, prefix);
    await sim.close();
  }
}

async function main() {
  setup();
  const home = await mkdtemp(path.join(os.tmpdir(), 'baton-bench-'));
  try {
    process.stdout.write(
      `worker benchmark: ${PROJECTS} projects x 3 sessions, concurrency ${CONCURRENCY}, ${os.cpus().length} cores, node ${process.version}\n`,
    );
    const run = await throughput(home);
    const bare = await bareBullmq(run.sessions);
    process.stdout.write(
      [
        `baton worker   ${run.sessions} sessions (${run.turns} model turns, ${run.simRequests} sim requests) in ${fmt(run.seconds)} s = ${fmt(run.sessions / run.seconds)} sessions/s; peak RSS ${fmt(run.peakMb, 0)} MB`,
        `  worker CPU (user+sys): ${fmt(run.cpuMs / run.sessions)} ms per session, ${fmt(run.cpuMs / run.turns)} ms per model turn (everything: BullMQ, SDK, memory tool, events, logs)`,
        `  worker overhead per session (claim -> release minus session time): p50 ${fmt(percentile(run.workerOverhead, 50))} ms, p95 ${fmt(percentile(run.workerOverhead, 95))} ms`,
        `  session wall time per turn excl. model and tool time (includes waiting for the CPU behind ${CONCURRENCY - 1} other sessions): p50 ${fmt(percentile(run.turnOverhead, 50))} ms, p95 ${fmt(percentile(run.turnOverhead, 95))} ms`,
        `bare BullMQ    ${run.sessions} no-op jobs in ${fmt(bare.seconds)} s = ${fmt(run.sessions / bare.seconds)} jobs/s`,
        '',
      ].join('\n'),
    );
    if (IDLE > 0) {
      const idle = await idleSessions(home);
      process.stdout.write(
        `idle sessions  ${IDLE} sessions waiting on a 5 s model: RSS ${fmt(idle.during.rssMb, 0)} MB (peak ${fmt(idle.during.peakMb, 0)} MB; ${fmt(idle.before.rssMb, 0)} MB before)\n`,
      );
    }
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

await main();
