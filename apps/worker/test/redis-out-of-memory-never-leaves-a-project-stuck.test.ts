import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { startWorldWorker } from './support/in-process-worker.js';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { createScriptedRunner } from './support/scripted-runner.js';
import { adminOf, controlWorld } from './support/sim-world.js';

/** Reconciler settings small enough for a test: every pass looks at every project at once. */
const MAINTENANCE = {
  memorySweepEveryMs: 0,
  jobRetentionMs: 60_000,
  reconcileEveryMs: 300,
  reconcileMinAgeMs: 0,
};

/** Holds session `sessionNumber` at its start until `release()`. */
function holdSession(sessionNumber: number) {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const hold = {
    started: false,
    release: () => release(),
    onStart: async (info: { sessionNumber: number }) => {
      if (info.sessionNumber !== sessionNumber) return;
      hold.started = true;
      await held;
    },
  };
  return hold;
}

describe('a full Redis (noeviction OOM) never leaves a project stuck', () => {
  // A private Redis: the tests fill it up (never the shared one).
  const world = controlWorld({ privateRedis: true });

  it('a project whose session job could not be added while Redis was full is queued again by the reconciler and completes', async () => {
    const { control } = world;
    const admin = adminOf(world);
    const id = randomProjectId('oom');
    await control.createProject({ id, goal: 'Build it\n- one\n- two' });
    // Full: every write is refused with OOM, as with a real maxmemory under noeviction.
    await admin.config('SET', 'maxmemory', '1');
    await expect(control.enqueue(id)).rejects.toThrow(/OOM/u);
    await admin.config('SET', 'maxmemory', '0');
    // What the user saw before the reconciler: queued, with no job and no lease, for ever.
    expect((await control.getProject(id))?.status).toBe('queued');
    expect(await control.queueCounts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });

    await startWorldWorker(world, {
      runSession: createScriptedRunner(),
      maintenance: MAINTENANCE,
    });
    const done = await waitForCompleted(control, id);
    expect(done.counters.featuresPassing).toBe(2);
    const events = await control.readEvents(id, { count: 1000 });
    const queued = events.filter((entry) => entry.event.type === 'session-queued');
    expect(queued[0]?.event).toMatchObject({
      type: 'session-queued',
      reason: 'resume',
      sessionNumber: 1,
    });
  });

  it('Redis full at the end of a session: the project is resumed once memory is freed and completes', async () => {
    const { control } = world;
    const admin = adminOf(world);
    const id = randomProjectId('oom');
    const hold = holdSession(2);
    await startWorldWorker(world, {
      lockDurationMs: 2_000,
      stalledIntervalMs: 1_000,
      leaseTtlMs: 2_000,
      runSession: createScriptedRunner({ onStart: hold.onStart }),
      maintenance: MAINTENANCE,
    });
    await control.createProject({ id, goal: 'Build it\n- one\n- two' });
    await control.enqueue(id);
    await waitFor('session 2 to start', () => hold.started);
    await admin.config('SET', 'maxmemory', '1');
    hold.release();
    // Everything the session and BullMQ write at its end is refused: Redis counts the refusals.
    await waitFor('Redis to refuse writes with OOM', async () => {
      const stats = await admin.info('errorstats');
      return Number(/errorstat_OOM:count=(\d+)/u.exec(stats)?.[1] ?? 0) >= 5;
    });
    await admin.config('SET', 'maxmemory', '0');
    const done = await waitForCompleted(control, id, 40_000);
    expect(done.counters.featuresPassing).toBe(2);
  });

  it('Redis full for a moment at the end of a session: the session records itself and chains on its own, no reconciler needed', async () => {
    const { control } = world;
    const admin = adminOf(world);
    const id = randomProjectId('oom');
    const hold = holdSession(2);
    // No maintenance: no reconciler runs, so only the chain's own retries can carry the project on.
    await startWorldWorker(world, {
      runSession: createScriptedRunner({ onStart: hold.onStart }),
    });
    await control.createProject({ id, goal: 'Build it\n- one\n- two' });
    await control.enqueue(id);
    await waitFor('session 2 to start', () => hold.started);
    const refusals = async () =>
      Number(/errorstat_OOM:count=(\d+)/u.exec(await admin.info('errorstats'))?.[1] ?? 0);
    const before = await refusals();
    await admin.config('SET', 'maxmemory', '1');
    hold.release();
    await waitFor(
      'Redis to refuse the session end with OOM',
      async () => (await refusals()) >= before + 3,
    );
    await admin.config('SET', 'maxmemory', '0');
    const done = await waitForCompleted(control, id, 40_000);
    expect(done.counters.featuresPassing).toBe(2);
    const sessions = await control.listSessions(id);
    // Session 2's own memory writes met the full Redis (it may have failed and been retried);
    // every session recorded itself, in order, and each one queued the next.
    expect(sessions.map((session) => session.sessionNumber)).toEqual(
      sessions.map((_, index) => index + 1),
    );
    const transitions = await control.listTransitions(id);
    expect(transitions.filter((move) => move.reason?.startsWith('reconciled'))).toEqual([]);
  });
});
