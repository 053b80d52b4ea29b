import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { privateRedisOf, simWorld } from './support/sim-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

/** A 4 s lease: renewed every 1 s, so a session's Redis calls time out after 3 s. */
const TIMINGS = {
  BATON_LOCK_DURATION_MS: '3000',
  BATON_STALLED_INTERVAL_MS: '1000',
  BATON_LEASE_TTL_MS: '4000',
};
const COMMAND_TIMEOUT_MS = 3_000;

/** The last `msg` of a log line, for readable failures. */
const message = (line: Record<string, unknown>) => String(line.msg);

describe('a frozen Redis (SIGSTOP: connections up, no replies) fails session calls fast', () => {
  // A private Redis: this test stops it (never the shared one).
  const world = simWorld({ privateRedis: true });

  it('the session stops and lets go of Redis while it is frozen; the project completes once it answers', async () => {
    const { sim, control, prefix, url } = world;
    const redis = privateRedisOf(world);
    const worker = world.closeAfter(
      await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: url }, TIMINGS)),
    );
    // Closed first: a frozen Redis answers nobody, the world's own clean-up included.
    world.closeAfter({ close: () => redis.thaw() });
    const id = randomProjectId('frozen');
    await control.createProject({ id, goal: 'Build a counter\n- increment\n- decrement\n- reset' });
    await control.enqueue(id);
    await waitFor(
      'init session done',
      async () => ((await control.getProject(id))?.counters.sessions ?? 0) >= 1,
    );
    // Session 2 waits on its model; then Redis stops answering anyone, and the model answers.
    sim.setFaults({ stallOn: [sim.requests + 2] });
    await sim.waitForStalled(1, 20_000);
    const before = worker.logs.length;
    redis.freeze();
    const frozenAt = Date.now();
    sim.releaseStalls();

    // Every call of the session (lease renewal, its record, events, transcript, memory, the model
    // rate limit, the lease release) fails after the timeout instead of waiting for replies that
    // never come: the session's job reaches its last step, releasing the lease, while Redis is
    // still frozen. (Each call costs the timeout, one after the other: about a minute here.)
    const released = await worker.waitForLog(
      (line) => message(line) === 'could not release project lease',
      180_000,
    );
    const after = worker.logs.slice(before);
    expect(after.map(message)).toContain(
      'project lease expired: no renewal reached Redis within its TTL; aborting session',
    );
    const timedOut = (line: Record<string, unknown>) =>
      JSON.stringify(line.err ?? '').includes('Command timed out');
    expect(timedOut(released)).toBe(true);
    expect(
      after.some((line) => message(line) === 'could not publish event' && timedOut(line)),
    ).toBe(true);
    // Nothing answered meanwhile: the timeouts are ours, not a reply.
    expect(Date.now() - frozenAt).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS);

    redis.thaw();
    const done = await waitForCompleted(control, id, 120_000);
    expect(done.counters.featuresPassing).toBe(3);
  }, 360_000);
});
