import Anthropic from '@anthropic-ai/sdk';
import { startModelSim, type ModelSim } from '@baton/model-sim';
import { runSession } from '@baton/session';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deletePrefix, REDIS_URL, waitFor } from '@baton/test-support';
import { createBatonControl, type BatonControl } from '@baton/projects';
import { startInProcessWorker } from './support/in-process-worker.js';
import { randomPrefix, randomProjectId } from './support/redis.js';

describe('project lifecycle on the simulator (real runSession, in-process worker)', () => {
  let prefix: string;
  let control: BatonControl;
  let sim: ModelSim;
  let home: string;
  const cleanups: (() => Promise<unknown>)[] = [];
  const projects: string[] = [];

  beforeEach(async () => {
    prefix = randomPrefix();
    home = await mkdtemp(path.join(os.tmpdir(), 'baton-lifecycle-'));
    control = createBatonControl({ url: REDIS_URL, prefix });
    sim = await startModelSim({ port: 0 });
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

  async function statusOf(id: string) {
    return (await control.getProject(id))?.status;
  }

  it('cancel aborts the running session, keeps the project cancelled, and resume finishes it', async () => {
    await startWorker();
    const id = randomProjectId('cancel');
    projects.push(id);
    await control.createProject({ id, goal: 'Two things\n- first\n- second' });
    await control.enqueue(id);
    await waitFor(
      'init done',
      async () => ((await control.getProject(id))?.counters.sessions ?? 0) >= 1,
    );
    sim.setFaults({ stallOn: [sim.requests + 2] });
    await sim.waitForStalled(1, 20_000);
    expect(await statusOf(id)).toBe('running');

    sim.setFaults({});
    const cancelled = await control.cancel(id);
    expect(cancelled.project.status).toBe('cancelled');
    const settled = await waitFor('the aborted session to be recorded', async () => {
      const project = await control.getProject(id);
      return project && project.activeSession === null && project.counters.sessions >= 2
        ? project
        : null;
    });
    expect(settled.status).toBe('cancelled');
    const sessions = await control.listSessions(id);
    expect(sessions.at(-1)?.outcome).toBe('cancelled');
    // Nothing was chained after the cancel.
    const counts = await control.queueCounts();
    expect((counts.waiting ?? 0) + (counts.delayed ?? 0)).toBe(0);

    await control.resume(id);
    await waitFor(
      'project completed after resume',
      async () => (await statusOf(id)) === 'completed',
      30_000,
    );
    const transitions = (await control.listTransitions(id)).map((transition) => transition.to);
    expect(transitions).toContain('cancelled');
    expect(transitions.at(-1)).toBe('completed');
  });

  it('pauses with a readable reason when the session budget of the project is used up', async () => {
    await startWorker();
    const id = randomProjectId('budget');
    projects.push(id);
    await control.createProject({
      id,
      goal: 'Four things\n- one\n- two\n- three\n- four',
      budgets: { maxSessions: 2 },
    });
    await control.enqueue(id);
    const paused = await waitFor(
      'project paused',
      async () => {
        const project = await control.getProject(id);
        return project?.status === 'paused' ? project : null;
      },
      30_000,
    );
    expect(paused.statusReason).toBe('budget: 2 of 2 sessions used');
    expect(paused.counters.sessions).toBe(2);
    expect(paused.counters.featuresPassing).toBeLessThan(4);
  });

  it('fails with the last error after repeated failed sessions when the model always answers 500', async () => {
    await startWorker();
    sim.setFaults({ alwaysFail: 500 });
    const id = randomProjectId('fail');
    projects.push(id);
    await control.createProject({ id, goal: 'Doomed\n- never' });
    await control.enqueue(id);
    const failed = await waitFor(
      'project failed',
      async () => {
        const project = await control.getProject(id);
        return project?.status === 'failed' ? project : null;
      },
      30_000,
    );
    expect(failed.statusReason).toMatch(/^3 failed sessions in a row; last error: .*500/);
    expect(failed.statusReason).not.toMatch(/\n|\s{4}at /);
    expect(failed.counters.sessions).toBe(3);
    expect(failed.lastError).toMatch(/500/);
  });
});
