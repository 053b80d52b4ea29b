import { createSessionQueue, sessionJobId } from '@baton/projects';
import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

const GOAL = 'Build\n- one\n- two\n- three';

describe('a session job of a project Redis lost never runs a session of the project created again under its id', () => {
  it('`baton enqueue` creates it again; the worker refuses the old job and runs only the new chain', async () => {
    const { redis } = world;
    const id = redis.projectId('again');
    const enqueue = () => world.cli(['enqueue', '--project', id, '--goal', GOAL]);
    expect((await enqueue()).code).toBe(0);

    // The first worker runs session 1 and queues session 2 an hour later.
    const first = world.startWorker('worker-1', { BATON_CHAIN_DELAY_MS: '3600000' }, [
      '--concurrency',
      '1',
    ]);
    await waitFor(
      'session 2 queued',
      async () =>
        (await redis.control.readEvents(id)).some(
          ({ event }) => event.type === 'session-queued' && event.sessionNumber === 2,
        ),
      60_000,
      100,
    );
    first.kill('SIGTERM');
    expect((await first.done).code).toBe(0);

    // Redis loses the project (record, events, memory) but not its delayed job `id@2`.
    await redis.control.deleteProject(id);
    expect(await redis.control.getProject(id)).toBeNull();
    const queue = createSessionQueue({
      connection: redis.repository.redis,
      keys: redis.control.keys,
    });
    try {
      const old = await queue.getJob(sessionJobId(id, 2));
      expect(await old?.getState()).toBe('delayed');
      // Its hour is up: it waits ahead of anything queued from now on.
      await old?.promote();
    } finally {
      await queue.close();
    }

    // The user creates the project again under the same id.
    expect((await enqueue()).code).toBe(0);
    const second = world.startWorker('worker-2', { BATON_CHAIN_DELAY_MS: '0', LOG_LEVEL: 'info' }, [
      '--concurrency',
      '1',
    ]);
    await world.waitForCompleted(id);
    second.kill('SIGTERM');
    const { stdout } = await second.done;

    // Only the new chain ran: sessions 1, 2, ... in order, the first from the new project's job.
    const claims = (await redis.control.readEvents(id, { count: 10_000 }))
      .map(({ event }) => event)
      .filter((event) => event.type === 'session-claimed');
    expect(claims.length).toBeGreaterThan(1);
    expect(claims.map((event) => event.sessionNumber)).toEqual(claims.map((_, index) => index + 1));
    expect(claims[0]?.jobId).toBe(sessionJobId(id, 1));
    // The old job was refused in one JSON line naming why.
    const refusals = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; jobId?: string; refused?: string })
      .filter((line) => line.msg === 'session job refused: not a job of this project');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ jobId: sessionJobId(id, 2) });
    expect(refusals[0]?.refused).toContain(`queued for an earlier project ${id}`);
  }, 180_000);
});
