/**
 * `findProblems` (below `baton status` and the dashboard's projects page) reads in pipelines: its
 * round trips do not grow with the number of projects. Fragments no session job names are found
 * by a bounded SCAN, which says when it stopped at its bound.
 */
import { Redis } from 'ioredis';
import { REDIS_URL } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { createBatonControl, createSessionQueue, findProjectProblems } from '../src/index.js';
import { randomProjectId, useControlWorld } from './support/redis.js';

describe('finding problems', () => {
  const world = useControlWorld();

  /** Stuck projects: created, and no job was ever queued for them. */
  async function createStuck(count: number): Promise<void> {
    for (let index = 0; index < count; index++) {
      await world.control.createProject({ id: randomProjectId('stuck'), goal: '- a' });
    }
  }

  /** `findProblems` on a connection of its own, counting what it writes to the socket. */
  async function roundTripsOfFindProblems(): Promise<{ writes: number; stuck: number }> {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const control = createBatonControl({ redis, prefix: world.prefix });
    try {
      // Connects, loads BullMQ's scripts and checks Redis once: not what is counted.
      await control.findProblems();
      // ioredis writes each command, and each pipeline as a whole, with one socket write.
      const stream = (redis as unknown as { stream: { write: (...args: unknown[]) => boolean } })
        .stream;
      const write = stream.write.bind(stream);
      let writes = 0;
      stream.write = (...args: unknown[]) => {
        writes += 1;
        return write(...args);
      };
      const found = await control.findProblems();
      stream.write = write;
      return { writes, stuck: found.problems.filter((problem) => problem.kind === 'stuck').length };
    } finally {
      await control.close();
      redis.disconnect();
    }
  }

  it('costs as many round trips for 40 stuck projects as for 4', async () => {
    await createStuck(4);
    const few = await roundTripsOfFindProblems();
    expect(few.stuck).toBe(4);
    await createStuck(36);
    const many = await roundTripsOfFindProblems();
    expect(many.stuck).toBe(40);
    expect(many.writes).toBe(few.writes);
  });

  it('finds a fragment no job names, and says so when the scan stopped at its bound', async () => {
    await createStuck(3);
    const lone = randomProjectId('alone');
    await world.redis.hset(world.control.keys.project(lone), 'status', 'running');
    const queue = createSessionQueue({ connection: world.redis, keys: world.control.keys });
    try {
      const options = { redis: world.redis, keys: world.control.keys, queue };
      // Bounded far above this Redis's keys: the whole keyspace is looked at.
      const whole = await findProjectProblems({ ...options, maxScanKeys: 100_000_000 });
      expect(whole.incomplete).toBeNull();
      expect(whole.problems.find((problem) => problem.projectId === lone)).toMatchObject({
        kind: 'fragment',
        problem: expect.stringContaining('only fragments of its record are left (status)'),
      });
      // A bound below the keyspace: the scan stops there and says what may be missing.
      const capped = await findProjectProblems({ ...options, scanCount: 2, maxScanKeys: 4 });
      expect(capped.incomplete).toContain('stopped after about 4 keys');
      expect(capped.incomplete).toContain('baton status ID');
      expect(capped.problems.filter((problem) => problem.kind === 'stuck')).toHaveLength(3);
    } finally {
      await queue.close();
    }
  });
});
