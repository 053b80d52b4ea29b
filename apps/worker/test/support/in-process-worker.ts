import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { ModelSim } from '@baton/model-sim';
import { runSession } from '@baton/session';
import { createRedisMemoryStore } from '@baton/storage-redis';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { REDIS_URL, type WorkerWorld } from '@baton/test-support';
import { createKeys, memoryConnectionOptions, workerConnectionOptions } from '@baton/projects';
import {
  createBatonWorker,
  type BatonWorker,
  type BatonWorkerOptions,
  type SessionRunner,
} from '../../src/index.js';

/** A worker in the test process with real connections; `stop()` closes it and its connections. */
export async function startInProcessWorker(
  options: {
    prefix: string;
    runSession: SessionRunner;
    url?: string;
    client?: Anthropic;
  } & Partial<BatonWorkerOptions>,
): Promise<BatonWorker & { stop(graceMs?: number): Promise<{ drained: boolean }> }> {
  const url = options.url ?? REDIS_URL;
  const workerConnection = new Redis(url, workerConnectionOptions());
  const commandConnection = new Redis(url, workerConnectionOptions());
  const subscriberConnection = new Redis(url, workerConnectionOptions());
  const memoryConnection = new Redis(url, memoryConnectionOptions());
  for (const connection of [
    workerConnection,
    commandConnection,
    subscriberConnection,
    memoryConnection,
  ]) {
    connection.on('error', () => undefined);
  }
  // Each worker is another machine: its own BATON_HOME, removed when it stops.
  const home = options.home ?? mkdtempSync(path.join(os.tmpdir(), 'baton-worker-home-'));
  const worker = createBatonWorker({
    concurrency: 4,
    lockDurationMs: 6000,
    stalledIntervalMs: 3000,
    maxStalledCount: 100,
    leaseTtlMs: 8000,
    chainDelayMs: 0,
    retryDelayMs: 10,
    maxConsecutiveFailures: 3,
    client: options.client ?? new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9' }),
    memoryStore: async (projectId, fence) => {
      const store = createRedisMemoryStore({
        redis: memoryConnection,
        namespace: projectId,
        prefix: createKeys(options.prefix).memoryPrefix,
        fence,
      });
      await store.claimFence();
      return store;
    },
    defaultModel: 'sim',
    workerId: `test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    ...options,
    home,
    workerConnection,
    commandConnection,
    subscriberConnection,
  });
  await worker.ready();
  return Object.assign(worker, {
    async stop(graceMs = 5000) {
      const result = await worker.close(graceMs);
      for (const connection of [
        workerConnection,
        commandConnection,
        subscriberConnection,
        memoryConnection,
      ]) {
        connection.disconnect();
      }
      if (options.home === undefined) rmSync(home, { recursive: true, force: true });
      return result;
    },
  });
}

type InProcessWorker = Awaited<ReturnType<typeof startInProcessWorker>>;

/**
 * `startInProcessWorker` on the world's Redis (or `url`, a proxy in front of it) and prefix,
 * stopped after the test (within `stopGraceMs`), before the world's parts close.
 */
export async function startWorldWorker(
  world: WorkerWorld<Record<never, never>>,
  options: Omit<Parameters<typeof startInProcessWorker>[0], 'prefix'> & {
    stopGraceMs?: number | undefined;
  },
): Promise<InProcessWorker> {
  const { stopGraceMs, ...workerOptions } = options;
  const worker = await startInProcessWorker({
    prefix: world.prefix,
    url: world.url,
    ...workerOptions,
  });
  world.closeAfter({ close: () => worker.stop(stopGraceMs) });
  return worker;
}

/**
 * `startWorldWorker` running the real `runSession` against the world's model simulator (the SDK's
 * own retries off: sessions retry themselves).
 */
export function startSimWorker(
  world: WorkerWorld<{ sim: ModelSim }>,
  options: Omit<Parameters<typeof startWorldWorker>[1], 'runSession' | 'client'>,
): Promise<InProcessWorker> {
  return startWorldWorker(world, {
    runSession,
    client: new Anthropic({ apiKey: 'test-key', baseURL: world.sim.url, maxRetries: 0 }),
    ...options,
  });
}
