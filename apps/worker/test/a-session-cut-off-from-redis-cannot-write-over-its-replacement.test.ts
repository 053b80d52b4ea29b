import { startTcpProxy, waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { capturedLogger } from './support/captured-logger.js';
import { startWorldWorker } from './support/in-process-worker.js';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { createScriptedRunner } from './support/scripted-runner.js';
import { controlWorld, privateRedisOf } from './support/sim-world.js';

/** Short locks and leases, so the other worker takes over within seconds of the partition. */
const FAST_TAKEOVER = { lockDurationMs: 2_000, stalledIntervalMs: 1_000, leaseTtlMs: 2_000 };

describe('fencing: a worker partitioned from Redis cannot write over the session that replaced it', () => {
  // A private Redis behind a proxy the test stalls: the partition.
  const world = controlWorld({ privateRedis: true });

  it('the other worker completes the project; the late write of the cut-off session is refused and that session stops', async () => {
    const { control } = world;
    // Closed after the workers that connect through it.
    const proxy = world.closeAfter(await startTcpProxy({ targetPort: privateRedisOf(world).port }));
    const id = randomProjectId('fence');
    let started: () => void = () => undefined;
    const aStarted = new Promise<void>((resolve) => (started = resolve));
    let release: () => void = () => undefined;
    const aReleased = new Promise<void>((resolve) => (release = resolve));
    let reportLateWrite: (outcome: string) => void = () => undefined;
    const lateWrite = new Promise<string>((resolve) => (reportLateWrite = resolve));

    const a = capturedLogger();
    await startWorldWorker(world, {
      url: proxy.url,
      stopGraceMs: 1_000,
      workerId: 'worker-a',
      ...FAST_TAKEOVER,
      logger: a.logger,
      runSession: createScriptedRunner({
        onStart: async ({ store }) => {
          started();
          await aReleased;
          // What a model's end-of-session note looks like, sent while the link is still down.
          try {
            await store.write('progress.md', 'late note of the cut-off session\n', {
              mode: 'overwrite',
            });
            reportLateWrite('written');
          } catch (error) {
            reportLateWrite(String(error));
            throw error;
          }
        },
      }),
    });
    // Before worker A stops: its connections must reach Redis to close.
    world.closeAfter({ close: () => proxy.restore() });
    await control.createProject({ id, goal: 'Build it\n- one\n- two' });
    await control.enqueue(id);
    await aStarted;

    // The partition: worker A's session keeps running, but nothing it sends reaches Redis.
    proxy.stall();
    await startWorldWorker(world, {
      workerId: 'worker-b',
      ...FAST_TAKEOVER,
      runSession: createScriptedRunner(),
    });
    const done = await waitForCompleted(control, id);
    expect(done.counters.featuresPassing).toBe(2);
    const progressBefore = await (await control.memoryStore(id)).read('progress.md');
    const eventsAtCompletion = await control.readEvents(id, { count: 10_000 });

    // A's session goes on and writes; then the link heals and the buffered write arrives.
    release();
    proxy.restore();
    expect(await lateWrite).toMatch(/no longer holds the project/);
    const memory = await control.memoryStore(id);
    expect(await memory.read('progress.md')).toBe(progressBefore);
    expect(progressBefore).not.toContain('late note');
    expect(a.lines.some((line) => line.msg?.toString().startsWith('session fenced out'))).toBe(
      true,
    );
    // A's session stopped, and nothing it sent afterwards (its session-end event, its record)
    // reached the project: the stream is as it was when B completed it.
    await waitFor('the cut-off session stopped', () =>
      a.lines.some((line) => line.msg === 'session abandoned'),
    );
    const eventsAfter = await control.readEvents(id, { count: 10_000 });
    expect(eventsAfter.slice(eventsAtCompletion.length).map((entry) => entry.event)).toEqual([]);

    // No overlap: A stopped its session (its lease watchdog, with no answer from Redis) before
    // B claimed the project.
    const stopped = a.lines.find((line) => String(line.msg).startsWith('project lease expired'));
    expect(stopped).toBeDefined();
    const firstClaimByB = eventsAfter.find(
      (entry) => entry.event.type === 'session-claimed' && entry.event.workerId === 'worker-b',
    );
    expect(Number(stopped?.time)).toBeLessThanOrEqual(firstClaimByB?.event.at ?? 0);

    // Still completed, with only worker B's sessions recorded.
    const after = await control.getProject(id);
    expect(after?.status).toBe('completed');
    const sessions = await control.listSessions(id);
    expect(sessions.map((session) => session.sessionNumber)).toEqual([1, 2, 3]);
    expect(new Set(sessions.map((session) => session.workerId))).toEqual(new Set(['worker-b']));
  });
});
