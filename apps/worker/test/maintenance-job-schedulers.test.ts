import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { waitFor } from '@baton/test-support';
import { MAINTENANCE_QUEUE_NAME } from '@baton/projects';
import { startWorldWorker } from './support/in-process-worker.js';
import { createScriptedRunner } from './support/scripted-runner.js';
import { controlWorld } from './support/sim-world.js';

describe('maintenance runs as BullMQ job schedulers', () => {
  const world = controlWorld();

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
      await startWorldWorker(world, { runSession: createScriptedRunner(), maintenance });
    }
    const connection = new Redis(world.url, { maxRetriesPerRequest: 1 });
    const queue = new Queue(MAINTENANCE_QUEUE_NAME, { connection, prefix: world.prefix });
    world.closeAfter({
      close: async () => {
        await queue.close();
        connection.disconnect();
      },
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
