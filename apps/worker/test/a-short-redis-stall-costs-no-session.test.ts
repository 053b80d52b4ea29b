import { waitFor } from '@baton/test-support';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { adminOf, simWorld } from './support/sim-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

/**
 * The job lock is shorter than the stall, so BullMQ cannot renew it whatever the timing; the
 * project lease (8 s, renewed every 2 s) outlives the stall, and it is what keeps a second
 * session out.
 */
const STALL_MS = 4_000;
const TIMINGS = {
  BATON_LOCK_DURATION_MS: '3000',
  BATON_STALLED_INTERVAL_MS: '1000',
  BATON_LEASE_TTL_MS: '8000',
};

describe('a Redis stall shorter than the lease (CLIENT PAUSE) costs no session', () => {
  const world = simWorld({ privateRedis: true });

  it('the paused session goes on and the project completes with every session run once', async () => {
    const { sim, control, prefix, url } = world;
    const admin = adminOf(world);
    const worker = world.closeAfter(
      await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url, redisUrl: url }, TIMINGS)),
    );
    const id = randomProjectId('pause');
    await control.createProject({ id, goal: 'Build a counter\n- increment\n- decrement\n- reset' });
    await control.enqueue(id);
    await waitFor(
      'init session done',
      async () => ((await control.getProject(id))?.counters.sessions ?? 0) >= 1,
    );
    // Session 2 waits on its model while Redis stops answering every client.
    sim.setFaults({ stallOn: [sim.requests + 2] });
    await sim.waitForStalled(1, 20_000);
    await admin.call('CLIENT', 'PAUSE', String(STALL_MS), 'ALL');
    // A fresh client's PING is held like every other command: it answers when the pause ends.
    const probe = new Redis(url, { maxRetriesPerRequest: 1 });
    const pausedAt = Date.now();
    await probe.ping();
    probe.disconnect();
    expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(STALL_MS - 500);
    // The job lock expired during the stall (it is shorter): BullMQ reports it.
    await worker.waitForLog((line) => String(line.msg).startsWith('job lock lost'));
    sim.releaseStalls();

    const done = await waitForCompleted(control, id, 60_000);
    expect(done.counters.featuresPassing).toBe(3);
    const sessions = await control.listSessions(id);
    const numbers = sessions.map((session) => session.sessionNumber);
    expect(numbers).toEqual(numbers.map((_, index) => index + 1));
    expect(sessions.some((session) => session.interrupted)).toBe(false);
    expect(done.counters.interruptions).toBe(0);
    const events = await control.readEvents(id, { count: 10_000 });
    expect(events.filter((entry) => entry.event.type === 'session-interrupted')).toEqual([]);
    const messages = worker.logs.map((line) => String(line.msg));
    // The worker kept the session because its lease still held.
    expect(messages.some((message) => message.startsWith('job lock lost (Redis stalled)'))).toBe(
      true,
    );
    expect(messages).not.toContain('job lock lost; aborting its session');
    expect(messages).not.toContain('session abandoned');
    expect(messages.some((message) => message.startsWith('project lease'))).toBe(false);
  });
});
