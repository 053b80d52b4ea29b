import { describe, expect, it } from 'vitest';
import { waitFor } from '@baton/test-support';
import { type EventEntry } from '@baton/projects';
import { waitForCompleted } from './support/redis.js';
import { stallSecondSession, useProcessWorld } from './support/process-world.js';
import { spawnWorker } from './support/worker-process.js';

describe('a worker killed with SIGKILL mid-session', () => {
  const world = useProcessWorld('baton-crash-');

  it('is resumed by another worker within 15 s, loses no acknowledged write and notes the interruption', async () => {
    const { control, sim, workers } = world;
    // Let init finish, then stall session 2 on the first worker. Both workers share one
    // BATON_HOME (see workspace-resumes-on-another-machine.test.ts for machines of their own).
    const { id, first, env } = await stallSecondSession(world, {
      label: 'crash',
      goal: 'Tools\n- add\n- subtract\n- multiply',
    });
    const running = await control.getProject(id);
    expect(running?.status).toBe('running');
    expect(running?.activeSession?.workerId).toBe('first');

    const second = await spawnWorker({ ...env, BATON_WORKER_ID: 'second' });
    workers.push(second);
    const eventsBeforeKill = await control.readEvents(id, { count: 10_000 });
    const killedAt = Date.now();
    first.kill('SIGKILL');
    await first.exited;
    sim.setFaults({});
    sim.releaseStalls();

    const claimed = await waitFor(
      'the second worker to claim the interrupted session',
      async () => {
        const events = await control.readEvents(id, { count: 10_000 });
        return events.find(
          (entry) =>
            entry.event.type === 'session-claimed' &&
            entry.event.workerId === 'second' &&
            entry.event.interrupted === true,
        );
      },
      30_000,
    );
    const resumedAfterMs = claimed.event.at - killedAt;
    expect(resumedAfterMs).toBeLessThan(15_000);

    const done = await waitForCompleted(control, id, 60_000);
    expect(done.counters.featuresPassing).toBe(3);
    expect(done.counters.interruptions).toBe(1);

    // Every memory write acknowledged (reported) before the crash is still there.
    const store = await control.memoryStore(id);
    const acknowledged = eventsBeforeKill
      .map((entry: EventEntry) => entry.event)
      .flatMap((event) => (event.type === 'memory-change' ? [event.change] : []));
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const change of acknowledged) {
      if (change.command === 'delete' || change.command === 'rename') continue;
      const storePath = change.path.replace(/^\/memories\/?/, '');
      expect(await store.stat(storePath), change.path).not.toBeNull();
    }
    const progress = (await store.read('progress.md')) ?? '';
    expect(progress).toMatch(/Session \d+ interrupted/);
    const interrupted = (await control.readEvents(id, { count: 10_000 })).flatMap(({ event }) =>
      event.type === 'session-interrupted' ? [event] : [],
    );
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]?.workerId).toBe('first');
  });
});
