import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deletePrefix, REDIS_URL, waitFor } from '@baton/test-support';
import { MAINTENANCE_QUEUE_NAME } from '@baton/projects';
import { startInProcessWorker } from './support/in-process-worker.js';
import { createScriptedRunner } from './support/scripted-runner.js';
import { randomPrefix } from './support/redis.js';

describe('maintenance runs as BullMQ job schedulers', () => {
  let prefix: string;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeEach(() => {
    prefix = randomPrefix();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await deletePrefix(prefix);
  });

  it('upserts the memory sweep, job retention and reconciler schedulers once, whatever the number of workers, and runs them', async () => {
    let sweeps = 0;
    const maintenance = {
      memorySweepEveryMs: 300,
      sweepMemory: async () => {
        sweeps += 1;
        return { removed: 0 };
      },
      jobRetentionMs: 1000,
      retentionEveryMs: 300,
    };
    for (let index = 0; index < 2; index += 1) {
      const worker = await startInProcessWorker({
        prefix,
        runSession: createScriptedRunner(),
        maintenance,
      });
      cleanups.push(() => worker.stop());
    }
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const queue = new Queue(MAINTENANCE_QUEUE_NAME, { connection, prefix });
    cleanups.push(async () => {
      await queue.close();
      connection.disconnect();
    });
    const schedulers = await queue.getJobSchedulers();
    expect(schedulers.map((scheduler) => scheduler.key).sort()).toEqual([
      'job-retention',
      'memory-expiry-sweep',
      'reconcile-projects',
    ]);
    await waitFor('two sweeps', () => sweeps >= 2, 10_000);
    await waitFor(
      'a retention run',
      async () => (await queue.getCompleted()).some((job) => job.name === 'job-retention'),
      10_000,
    );
  });
});
