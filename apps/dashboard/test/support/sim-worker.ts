import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { startModelSim, type ModelSim, type SimFaults } from '@baton/model-sim';
import { runSession } from '@baton/session';
import { createRedisMemoryStore } from '@baton/storage-redis';
import { REDIS_URL } from '@baton/test-support';
import { memoryConnectionOptions, workerConnectionOptions } from '@baton/projects';
import {
  createBatonWorker,
  createLogger,
  type BatonWorker,
  type SessionRunner,
} from '@baton/worker';
import { Redis } from 'ioredis';

export interface SimWorker {
  sim: ModelSim;
  worker: BatonWorker;
  stop(): Promise<void>;
}

/**
 * A real worker in the test process running real sessions (`runSession` from @baton/session)
 * against the model simulator through the real Anthropic SDK.
 */
export async function startSimWorker(options: {
  prefix: string;
  memoryPrefix: string;
  faults?: SimFaults;
}): Promise<SimWorker> {
  const sim = await startModelSim({
    port: 0,
    faults: options.faults,
  });
  const connections = [
    new Redis(REDIS_URL, workerConnectionOptions()),
    new Redis(REDIS_URL, workerConnectionOptions()),
    new Redis(REDIS_URL, workerConnectionOptions()),
    new Redis(REDIS_URL, memoryConnectionOptions()),
  ] as const;
  for (const connection of connections) connection.on('error', () => undefined);
  const [workerConnection, commandConnection, subscriberConnection, memoryConnection] = connections;
  const workerId = `dashboard-test-${process.pid}`;
  const home = await mkdtemp(path.join(os.tmpdir(), 'baton-dashboard-worker-'));
  const worker = createBatonWorker({
    home,
    prefix: options.prefix,
    workerConnection,
    commandConnection,
    subscriberConnection,
    concurrency: 2,
    lockDurationMs: 10_000,
    stalledIntervalMs: 5_000,
    maxStalledCount: 10,
    leaseTtlMs: 10_000,
    chainDelayMs: 0,
    retryDelayMs: 50,
    maxConsecutiveFailures: 2,
    runSession: runSession as unknown as SessionRunner,
    client: new Anthropic({ apiKey: 'sim', baseURL: sim.url, maxRetries: 0 }),
    memoryStore: (projectId) =>
      createRedisMemoryStore({
        redis: memoryConnection,
        namespace: projectId,
        prefix: options.memoryPrefix,
      }),
    defaultModel: 'sim',
    workerId,
    logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', workerId }),
  });
  await worker.ready();
  return {
    sim,
    worker,
    async stop() {
      await worker.close(5_000);
      for (const connection of connections) connection.disconnect();
      await sim.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}
