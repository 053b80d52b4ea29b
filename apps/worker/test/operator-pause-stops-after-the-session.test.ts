import Anthropic from '@anthropic-ai/sdk';
import { startModelSim, type ModelSim, type SimScriptRequest } from '@baton/model-sim';
import { runSession } from '@baton/session';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deletePrefix, REDIS_URL, waitFor } from '@baton/test-support';
import { createBatonControl, type BatonControl } from '@baton/projects';
import { startInProcessWorker } from './support/in-process-worker.js';
import { randomPrefix, randomProjectId } from './support/redis.js';

describe('operating a running project: pause and guidance (real runSession, in-process worker, real Redis)', () => {
  let prefix: string;
  let control: BatonControl;
  let sim: ModelSim;
  let home: string;
  let seen: SimScriptRequest[];
  const cleanups: (() => Promise<unknown>)[] = [];
  const projects: string[] = [];

  beforeEach(async () => {
    prefix = randomPrefix();
    home = await mkdtemp(path.join(os.tmpdir(), 'baton-pause-'));
    control = createBatonControl({ url: REDIS_URL, prefix });
    seen = [];
    sim = await startModelSim({ port: 0, script: (request) => void seen.push(request) });
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    for (const id of projects.splice(0)) await control.deleteProject(id);
    await control.close();
    await sim.close();
    await deletePrefix(prefix);
    await rm(home, { recursive: true, force: true });
  });

  async function startWorker() {
    const worker = await startInProcessWorker({
      prefix,
      runSession,
      client: new Anthropic({ apiKey: 'test-key', baseURL: sim.url, maxRetries: 0 }),
      sessionOptions: () => ({
        retry: { maxRetries: 1, baseDelayMs: 10 },
        endOfSessionTimeoutMs: 5000,
      }),
    });
    cleanups.push(() => worker.stop());
    return worker;
  }

  it('ends the running session with its notes, queues nothing, and resume continues it', async () => {
    await startWorker();
    const id = randomProjectId('pause');
    projects.push(id);
    await control.createProject({ id, goal: 'Two things\n- first\n- second' });
    await control.enqueue(id);
    await waitFor(
      'init done',
      async () => ((await control.getProject(id))?.counters.sessions ?? 0) >= 1,
    );
    sim.setFaults({ stallOn: [sim.requests + 2] });
    await sim.waitForStalled(1, 20_000);
    const held = sim.requests;
    const running = await control.getProject(id);
    expect(running?.status).toBe('running');
    sim.setFaults({});

    const paused = await control.pause(id);
    expect(paused).toMatchObject({
      changed: true,
      removedJobId: null,
      runningSessionId: running?.activeSession?.sessionId,
    });
    expect(paused.project).toMatchObject({ status: 'paused', statusReason: 'paused by operator' });

    const settled = await waitFor('the paused session to be recorded', async () => {
      const project = await control.getProject(id);
      return project && project.activeSession === null && project.counters.sessions >= 2
        ? project
        : null;
    });
    expect(settled.status).toBe('paused');
    const sessions = await control.listSessions(id);
    expect(sessions.at(-1)).toMatchObject({ outcome: 'paused', sessionNumber: 2 });
    // The pause aborted the held mid-work request (never answered): the closing turn built after
    // it still met the strict simulator's rules.
    expect(sim.received.some((record) => record.number === held)).toBe(false);
    expect(sim.received.filter((record) => record.status >= 400)).toEqual([]);
    // The session closed its log before stopping.
    const memory = await control.memoryStore(id);
    expect(await memory.read('progress.md')).toContain('Session 2 end');
    // Nothing was chained after the pause, and no session starts.
    const counts = await control.queueCounts();
    expect((counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0)).toBe(0);
    const events = (await control.readEvents(id, { count: 1000 })).map((entry) => entry.event);
    const pausedEvent = events.find((event) => event.type === 'project-paused');
    expect(pausedEvent).toMatchObject({
      by: 'operator',
      runningSessionId: paused.runningSessionId,
    });
    expect(
      events.some((event) => event.type === 'session-claimed' && event.sessionNumber === 3),
    ).toBe(false);
    const transitions = await control.listTransitions(id);
    expect(transitions.at(-1)).toMatchObject({
      from: 'running',
      to: 'paused',
      reason: 'paused by operator',
    });
    expect(transitions.some((transition) => transition.to === 'cancelled')).toBe(false);

    await control.resume(id);
    await waitFor(
      'project completed after resume',
      async () => (await control.getProject(id))?.status === 'completed',
      30_000,
    );
  });

  it('guidance sent while the session waits on the model arrives in its next request and is acknowledged', async () => {
    await startWorker();
    const id = randomProjectId('say');
    projects.push(id);
    await control.createProject({ id, goal: 'Two things\n- first\n- second' });
    await control.enqueue(id);
    await waitFor(
      'init done',
      async () => ((await control.getProject(id))?.counters.sessions ?? 0) >= 1,
    );
    const stalled = sim.requests + 2;
    sim.setFaults({ stallOn: [stalled] });
    await sim.waitForStalled(1, 20_000);
    const { guidance } = await control.say(id, 'Keep the CLI output plain.');
    sim.releaseStalls();
    await waitFor(
      'project completed',
      async () => (await control.getProject(id))?.status === 'completed',
      30_000,
    );
    const carries = (request: SimScriptRequest | undefined) =>
      JSON.stringify(request?.params.messages ?? []).includes(
        `operator_guidance id=\\"${guidance.id}\\"`,
      );
    expect(carries(seen.find((request) => request.number === stalled))).toBe(false);
    expect(carries(seen.find((request) => request.number === stalled + 1))).toBe(true);
    const [kept] = await control.listGuidance(id);
    expect(kept?.acknowledged).toMatchObject({ sessionId: expect.any(String) });
    const events = (await control.readEvents(id, { count: 1000 })).map((entry) => entry.event);
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
    await control.createProject({ id, goal: '- a' });
    await control.enqueue(id);
    expect((await control.queueCounts()).waiting).toBe(1);
    const paused = await control.pause(id);
    expect(paused).toMatchObject({
      changed: true,
      removedJobId: `${id}@1`,
      runningSessionId: null,
    });
    expect((await control.queueCounts()).waiting).toBe(0);
    expect((await control.pause(id)).changed).toBe(false);
    const done = randomProjectId('pausedone');
    projects.push(done);
    await control.createProject({ id: done, goal: '- a' });
    await control.cancel(done);
    await expect(control.pause(done)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('is cancelled'),
    });
    await expect(control.pause('ghost-pause')).rejects.toMatchObject({ code: 'not_found' });
  });
});
