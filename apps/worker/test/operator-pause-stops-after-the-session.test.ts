import type { SimScriptRequest } from '@baton/model-sim';
import { beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '@baton/test-support';
import { startSimWorker } from './support/in-process-worker.js';
import { randomProjectId } from './support/redis.js';
import { simWorld } from './support/sim-world.js';

describe('operating a running project: pause and guidance (real runSession, in-process worker, real Redis)', () => {
  // Every request the simulator saw in the current test.
  const seen: SimScriptRequest[] = [];
  beforeEach(() => {
    seen.length = 0;
  });
  const world = simWorld({
    tempPrefix: 'baton-pause-',
    sim: { script: (request) => void seen.push(request) },
  });
  const { projects } = world;

  async function startWorker() {
    return startSimWorker(world, {
      sessionOptions: () => ({
        retry: { maxRetries: 1, baseDelayMs: 10 },
        endOfSessionTimeoutMs: 5000,
      }),
    });
  }

  it('ends the running session with its notes, queues nothing, and resume continues it', async () => {
    await startWorker();
    const id = randomProjectId('pause');
    projects.push(id);
    await world.control.createProject({ id, goal: 'Two things\n- first\n- second' });
    await world.control.enqueue(id);
    await waitFor(
      'init done',
      async () => ((await world.control.getProject(id))?.counters.sessions ?? 0) >= 1,
    );
    world.sim.setFaults({ stallOn: [world.sim.requests + 2] });
    await world.sim.waitForStalled(1, 20_000);
    const held = world.sim.requests;
    const running = await world.control.getProject(id);
    expect(running?.status).toBe('running');
    world.sim.setFaults({});

    const paused = await world.control.pause(id);
    expect(paused).toMatchObject({
      changed: true,
      removedJobId: null,
      runningSessionId: running?.activeSession?.sessionId,
    });
    expect(paused.project).toMatchObject({ status: 'paused', statusReason: 'paused by operator' });

    const settled = await waitFor('the paused session to be recorded', async () => {
      const project = await world.control.getProject(id);
      return project && project.activeSession === null && project.counters.sessions >= 2
        ? project
        : null;
    });
    expect(settled.status).toBe('paused');
    const sessions = await world.control.listSessions(id);
    expect(sessions.at(-1)).toMatchObject({ outcome: 'paused', sessionNumber: 2 });
    // The pause aborted the held mid-work request (never answered): the closing turn built after
    // it still met the strict simulator's rules.
    expect(world.sim.received.some((record) => record.number === held)).toBe(false);
    expect(world.sim.received.filter((record) => record.status >= 400)).toEqual([]);
    // The session closed its log before stopping.
    const memory = await world.control.memoryStore(id);
    expect(await memory.read('progress.md')).toContain('Session 2 end');
    // Nothing was chained after the pause, and no session starts.
    const counts = await world.control.queueCounts();
    expect((counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0)).toBe(0);
    const events = (await world.control.readEvents(id, { count: 1000 })).map(
      (entry) => entry.event,
    );
    const pausedEvent = events.find((event) => event.type === 'project-paused');
    expect(pausedEvent).toMatchObject({
      by: 'operator',
      runningSessionId: paused.runningSessionId,
    });
    expect(
      events.some((event) => event.type === 'session-claimed' && event.sessionNumber === 3),
    ).toBe(false);
    const transitions = await world.control.listTransitions(id);
    expect(transitions.at(-1)).toMatchObject({
      from: 'running',
      to: 'paused',
      reason: 'paused by operator',
    });
    expect(transitions.some((transition) => transition.to === 'cancelled')).toBe(false);

    await world.control.resume(id);
    await waitFor(
      'project completed after resume',
      async () => (await world.control.getProject(id))?.status === 'completed',
      30_000,
    );
  });

  it('guidance sent while the session waits on the model arrives in its next request and is acknowledged', async () => {
    await startWorker();
    const id = randomProjectId('say');
    projects.push(id);
    await world.control.createProject({ id, goal: 'Two things\n- first\n- second' });
    await world.control.enqueue(id);
    await waitFor(
      'init done',
      async () => ((await world.control.getProject(id))?.counters.sessions ?? 0) >= 1,
    );
    const stalled = world.sim.requests + 2;
    world.sim.setFaults({ stallOn: [stalled] });
    await world.sim.waitForStalled(1, 20_000);
    const { guidance } = await world.control.say(id, 'Keep the CLI output plain.');
    world.sim.releaseStalls();
    await waitFor(
      'project completed',
      async () => (await world.control.getProject(id))?.status === 'completed',
      30_000,
    );
    const carries = (request: SimScriptRequest | undefined) =>
      JSON.stringify(request?.params.messages ?? []).includes(
        `operator_guidance id=\\"${guidance.id}\\"`,
      );
    expect(carries(seen.find((request) => request.number === stalled))).toBe(false);
    expect(carries(seen.find((request) => request.number === stalled + 1))).toBe(true);
    const [kept] = await world.control.listGuidance(id);
    expect(kept?.acknowledged).toMatchObject({ sessionId: expect.any(String) });
    const events = (await world.control.readEvents(id, { count: 1000 })).map(
      (entry) => entry.event,
    );
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['guidance-sent', 'guidance-delivered']),
    );
    // Acknowledged, so the next session's first message does not repeat it.
    const laterFirst = seen.filter((request) => request.params.messages.length === 1).at(-1);
    expect(laterFirst === undefined || laterFirst.number <= stalled || !carries(laterFirst)).toBe(
      true,
    );
  });

  it('a queued project loses its queued job; pausing twice changes nothing; a finished one is refused', async () => {
    const id = randomProjectId('pauseq');
    projects.push(id);
    await world.control.createProject({ id, goal: '- a' });
    await world.control.enqueue(id);
    expect((await world.control.queueCounts()).waiting).toBe(1);
    const paused = await world.control.pause(id);
    expect(paused).toMatchObject({
      changed: true,
      removedJobId: `${id}@1`,
      runningSessionId: null,
    });
    expect((await world.control.queueCounts()).waiting).toBe(0);
    expect((await world.control.pause(id)).changed).toBe(false);
    const done = randomProjectId('pausedone');
    projects.push(done);
    await world.control.createProject({ id: done, goal: '- a' });
    await world.control.cancel(done);
    await expect(world.control.pause(done)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('is cancelled'),
    });
    await expect(world.control.pause('ghost-pause')).rejects.toMatchObject({ code: 'not_found' });
  });
});
