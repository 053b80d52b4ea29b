// One setup for the webhook tests: a private prefix, a producer and a worker connection, the
// notification queue, the receivers a test starts and the delivery worker, all closed after it.
import {
  REDIS_URL,
  deletePrefix,
  randomHex,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@baton/test-support';
import type { Queue, Worker } from 'bullmq';
import { afterEach, beforeEach } from 'vitest';
import {
  createRedisConnection,
  createWebhookQueue,
  createWebhookWorker,
  producerConnectionOptions,
  readRedisTarget,
  workerConnectionOptions,
  type RedisClient,
  type WebhookJobData,
} from '../../src/index.js';

/** The project every delivery describes (what `loadProject` finds for `p1`). */
const WEBHOOK_PROJECT = {
  id: 'p1',
  status: 'completed',
  statusReason: 'all 3 features pass',
  featuresPassing: 3,
  featuresTotal: 3,
  featuresVerified: 2,
  featuresClaimed: 1,
  featuresRegressed: 0,
  inputTokens: 1200,
  outputTokens: 300,
  costUsd: 0.0125,
};

type WorkerOptions = Omit<
  Parameters<typeof createWebhookWorker>[0],
  'connection' | 'prefix' | 'loadProject'
>;

export interface WebhookHarness {
  /** The test's notification queue (a fresh prefix per test). */
  readonly queue: Queue<WebhookJobData>;
  /** Starts a receiver, closed after the test. */
  receiver(options?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver>;
  /** Starts the delivery worker on the test's prefix, loading `WEBHOOK_PROJECT`. */
  startWorker(options: WorkerOptions): void;
}

/** Registers the per-test setup and teardown; the harness is valid inside each test. */
export function useWebhookHarness(name: string): WebhookHarness {
  let prefix = '';
  let connections: RedisClient[] = [];
  let queue: Queue<WebhookJobData> | undefined;
  let worker: Worker<WebhookJobData> | undefined;
  let receivers: WebhookReceiver[] = [];

  beforeEach(() => {
    prefix = `{${name}-${randomHex(6)}}`;
    const target = readRedisTarget({ REDIS_URL });
    connections = [
      createRedisConnection(target, producerConnectionOptions()),
      createRedisConnection(target, workerConnectionOptions()),
    ];
    queue = createWebhookQueue({ connection: connections[0]!, prefix });
    receivers = [];
  });

  afterEach(async () => {
    await worker?.close();
    worker = undefined;
    await queue?.close();
    for (const connection of connections) connection.disconnect();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await deletePrefix(prefix);
  });

  return {
    get queue() {
      if (queue === undefined) throw new Error('the webhook harness is used outside a test');
      return queue;
    },
    async receiver(options = {}) {
      const started = await startWebhookReceiver(options);
      receivers.push(started);
      return started;
    },
    startWorker(options) {
      worker = createWebhookWorker({
        ...options,
        connection: connections[1]!,
        prefix,
        loadProject: (id) => Promise.resolve(id === WEBHOOK_PROJECT.id ? WEBHOOK_PROJECT : null),
      });
    },
  };
}
