/// <reference lib="dom" />
/**
 * `pnpm bench:dashboard`: the dashboard over a fleet, in Debian's Chromium (playwright-core),
 * against a private Redis prefix seeded through the control API (no worker runs).
 *
 * - Projects page, first rows after navigation (median of 5): BATON_BENCH_PROJECTS (10,000)
 *   projects against the baseline of 100 projects, measured in the same run.
 * - A burst of BATON_BENCH_BURST (500) status changes: time until every change is visible (the
 *   running chip counts them all and every visible row shows it), input latency of clicks sent
 *   every 25 ms meanwhile (event timestamp to handler), against the same clicks on the idle page.
 * - The page's JS heap after load and after the burst (CDP, after a GC), 10,000 vs 100 projects.
 * - The project page of one project with BATON_BENCH_EVENTS (10,000) events and 500 sessions:
 *   first render (header, session table, event list and token chart), against a new project.
 *
 * Results: docs/benchmarks.md. Prints the machine's `uptime` load with the numbers.
 */
import { execFileSync } from 'node:child_process';
import {
  createBatonControl,
  createKeys,
  ProjectRepository,
  type BatonControl,
} from '@baton/projects';
import { deletePrefix, randomHex, REDIS_URL } from '@baton/test-support';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { inParallel } from './in-parallel.js';
import { createDashboardServer, type DashboardServer } from '../src/index.js';
import { launchTestBrowser } from '../test/support/browser.js';
import { sessionSummary } from '../test/support/session-summary.js';

const PROJECTS = Number(process.env.BATON_BENCH_PROJECTS ?? 10_000);
const BASELINE_PROJECTS = 100;
const BURST = Number(process.env.BATON_BENCH_BURST ?? 500);
const EVENTS = Number(process.env.BATON_BENCH_EVENTS ?? 10_000);
const SESSIONS = 500;

interface Fleet {
  prefix: string;
  control: BatonControl;
  repository: ProjectRepository;
  redis: Redis;
  server: DashboardServer;
  ids: string[];
  seedSeconds: number;
}

async function startFleet(count: number): Promise<Fleet> {
  const prefix = `{bench-dash-${randomHex(4)}}`;
  const control = createBatonControl({ url: REDIS_URL, prefix });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const repository = new ProjectRepository({ redis, keys: createKeys(prefix) });
  const ids = Array.from({ length: count }, (_, index) => `p-${String(index).padStart(5, '0')}`);
  const started = performance.now();
  await inParallel(ids, (id) =>
    control.createProject({ id, goal: `Fleet project ${id}\n- one feature` }),
  );
  const seedSeconds = (performance.now() - started) / 1000;
  const server = await createDashboardServer({
    control,
    port: 0,
    token: '',
    logger: pino({ level: 'silent' }),
    onError: () => undefined,
  });
  return { prefix, control, repository, redis, server, ids, seedSeconds };
}

async function stopFleet(fleet: Fleet): Promise<void> {
  await fleet.server.close();
  await fleet.control.close();
  fleet.redis.disconnect();
  await deletePrefix(fleet.prefix);
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

async function firstRowsMs(page: Page, url: string): Promise<number> {
  await page.goto('about:blank');
  const started = performance.now();
  await page.goto(url);
  await page.waitForSelector('[data-testid=projects-table] tbody tr');
  return performance.now() - started;
}

async function heapMb(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
  await cdp.detach();
  return usedSize / 1024 / 1024;
}

/** Clicks the summary every 25 ms until `until` settles; returns each click's input latency. */
async function clickLatencies(page: Page, until: Promise<unknown>): Promise<number[]> {
  await page.evaluate(() => {
    const latencies: number[] = [];
    (window as unknown as { __latencies: number[] }).__latencies = latencies;
    document.querySelector('.summary')!.addEventListener('click', (event) => {
      latencies.push(performance.now() - event.timeStamp);
    });
  });
  let done = false;
  void until.finally(() => (done = true));
  const box = (await page.locator('.summary').boundingBox())!;
  do {
    await page.mouse.click(box.x + 2, box.y + 2);
    await new Promise((resolve) => setTimeout(resolve, 25));
  } while (!done);
  await until;
  return page.evaluate(() => (window as unknown as { __latencies: number[] }).__latencies);
}

async function burst(fleet: Fleet, page: Page) {
  await page.goto(new URL('/', fleet.server.url).toString());
  await page.waitForSelector('#live[data-state=open]');
  await page.waitForSelector('main[data-loaded=true]');
  const idle = await clickLatencies(page, new Promise((resolve) => setTimeout(resolve, 1_000)));
  // The newest projects: the visible page is among them.
  const changed = fleet.ids.slice(-BURST);
  const started = performance.now();
  let visibleMs = 0;
  const visible = page.waitForFunction(
    (count) => {
      const chip = document.querySelector('.filters button[data-status="running"] .count');
      const rows = [...document.querySelectorAll('[data-testid=projects-table] tbody tr')];
      return (
        chip?.textContent === String(count) &&
        rows.length > 0 &&
        rows.every((row) => (row as HTMLElement).dataset.status === 'running')
      );
    },
    Math.min(BURST, fleet.ids.length),
    { timeout: 60_000, polling: 'raf' },
  );
  const writes = inParallel(changed, (id) =>
    fleet.repository.transition(id, 'running', { reason: 'bench' }),
  );
  const latencies = await clickLatencies(
    page,
    Promise.all([writes, visible.then(() => (visibleMs = performance.now() - started))]),
  );
  await Promise.all([writes, visible]);
  return { visibleMs, latencies, idle };
}

async function seedBigProject(fleet: Fleet): Promise<string> {
  const id = 'big-project';
  await fleet.control.createProject({ id, goal: 'A project with a long history\n- one' });
  await fleet.repository.transition(id, 'running', { reason: 'bench' });
  const sessionIds = Array.from({ length: SESSIONS }, (_, index) => index + 1);
  // Cached input, so the session table renders its hit rates as on a real project.
  const cached = { cacheReadInputTokens: 100_000, cacheCreationInputTokens: 1_000 };
  await inParallel(sessionIds, (number) =>
    fleet.repository.recordSessionEnd(id, sessionSummary(number, cached), { failed: false }),
  );
  const events = Array.from({ length: EVENTS }, (_, index) => index);
  const perSession = Math.max(1, Math.floor(EVENTS / SESSIONS));
  await inParallel(events, (index) => {
    const session = Math.floor(index / perSession) + 1;
    const turn = (index % perSession) + 1;
    return fleet.repository.appendEvent(id, {
      v: 1,
      type: 'turn',
      at: Date.now(),
      projectId: id,
      sessionId: `s${session}`,
      turn,
      stopReason: 'tool_use',
      durationMs: 10,
      usage: { inputTokens: 1_000 + turn, cacheReadInputTokens: 5_000, outputTokens: 50 },
      appliedEdits: [],
      clearedInputTokens: 0,
      costUsd: 0.001,
    } as never);
  });
  return id;
}

/** Navigation to header, session table, live-stream snapshot (event list) and token chart. */
async function projectPageMs(
  page: Page,
  base: string,
  id: string,
  history: boolean,
): Promise<number> {
  await page.goto('about:blank');
  const started = performance.now();
  await page.goto(new URL(`/projects/${id}`, base).toString());
  await page.waitForSelector('.project-head .badge');
  await page.waitForSelector('#live[data-state=open]');
  await page.waitForFunction(() => document.querySelector('#sessions table, #sessions p') !== null);
  if (history) {
    await page.waitForSelector('[data-testid=event-tail] li');
    await page.waitForSelector('[data-testid=token-chart] circle, [data-testid=token-chart] rect');
  }
  return performance.now() - started;
}

async function main() {
  const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
  console.log(`load before: ${load()}`);
  const browser = await launchTestBrowser();
  const { page } = browser;
  const results: Record<string, unknown> = {};
  try {
    for (const count of [BASELINE_PROJECTS, PROJECTS]) {
      const fleet = await startFleet(count);
      try {
        const url = new URL('/', fleet.server.url).toString();
        await firstRowsMs(page, url); // warm-up: the server's first page and the browser's cache
        const times: number[] = [];
        for (let round = 0; round < 5; round++) times.push(await firstRowsMs(page, url));
        const heapLoaded = await heapMb(page);
        const { visibleMs, latencies, idle } = await burst(fleet, page);
        const heapAfter = await heapMb(page);
        const label = `${count} projects`;
        results[label] = {
          seedSeconds: Number(fleet.seedSeconds.toFixed(2)),
          firstRowsMs: { median: Math.round(median(times)), all: times.map(Math.round) },
          burst: {
            changes: Math.min(BURST, count),
            allVisibleMs: Math.round(visibleMs),
            clicks: latencies.length,
            clickLatencyMs: {
              p50: Number(median(latencies).toFixed(1)),
              p95: Number(percentile(latencies, 0.95).toFixed(1)),
              max: Number(Math.max(...latencies).toFixed(1)),
            },
            idleClickLatencyMs: {
              p50: Number(median(idle).toFixed(1)),
              max: Number(Math.max(...idle).toFixed(1)),
            },
          },
          heapMb: {
            loaded: Number(heapLoaded.toFixed(1)),
            afterBurst: Number(heapAfter.toFixed(1)),
          },
        };
        console.log(label, JSON.stringify(results[label]));
        if (count === PROJECTS) {
          const fresh = 'fresh-project';
          await fleet.control.createProject({ id: fresh, goal: 'New\n- one' });
          const started = performance.now();
          const big = await seedBigProject(fleet);
          const seeded = (performance.now() - started) / 1000;
          await projectPageMs(page, fleet.server.url, fresh, false);
          await projectPageMs(page, fleet.server.url, big, true);
          const freshTimes: number[] = [];
          const bigTimes: number[] = [];
          for (let round = 0; round < 5; round++) {
            freshTimes.push(await projectPageMs(page, fleet.server.url, fresh, false));
            bigTimes.push(await projectPageMs(page, fleet.server.url, big, true));
          }
          results.projectPage = {
            events: EVENTS,
            sessions: SESSIONS,
            seedSeconds: Number(seeded.toFixed(2)),
            bigFirstRenderMs: {
              median: Math.round(median(bigTimes)),
              all: bigTimes.map(Math.round),
            },
            newFirstRenderMs: {
              median: Math.round(median(freshTimes)),
              all: freshTimes.map(Math.round),
            },
            ratio: Number((median(bigTimes) / median(freshTimes)).toFixed(2)),
            heapMb: Number((await heapMb(page)).toFixed(1)),
          };
          console.log('project page', JSON.stringify(results.projectPage));
        }
      } finally {
        await stopFleet(fleet);
      }
    }
    const small = results[`${BASELINE_PROJECTS} projects`] as { firstRowsMs: { median: number } };
    const big = results[`${PROJECTS} projects`] as { firstRowsMs: { median: number } };
    console.log(
      `first rows: ${PROJECTS} projects / ${BASELINE_PROJECTS} projects = ${(big.firstRowsMs.median / small.firstRowsMs.median).toFixed(2)}`,
    );
    console.log(`load after: ${load()}`);
  } finally {
    await browser.close();
  }
}

await main();
