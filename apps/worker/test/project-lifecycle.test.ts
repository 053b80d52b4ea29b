import { describe, expect, it } from 'vitest';
import { waitFor } from '@baton/test-support';
import { startSimWorker } from './support/in-process-worker.js';
import { randomProjectId } from './support/redis.js';
import { simWorld } from './support/sim-world.js';

describe('project lifecycle on the simulator (real runSession, in-process worker)', () => {
  const world = simWorld({ tempPrefix: 'baton-lifecycle-' });
  const { projects } = world;

  async function startWorker() {
    return startSimWorker(world, {
      sessionOptions: () => ({
        retry: { maxRetries: 1, baseDelayMs: 10 },
        endOfSessionTimeoutMs: 5000,
      }),
    });
  }

  async function statusOf(id: string) {
    return (await world.control.getProject(id))?.status;
  }

  it('cancel aborts the running session, keeps the project cancelled, and resume finishes it', async () => {
    await startWorker();
    const id = randomProjectId('cancel');
    projects.push(id);
    await world.control.createProject({ id, goal: 'Two things\n- first\n- second' });
    await world.control.enqueue(id);
    await waitFor(
      'init done',
      async () => ((await world.control.getProject(id))?.counters.sessions ?? 0) >= 1,
    );
    world.sim.setFaults({ stallOn: [world.sim.requests + 2] });
    await world.sim.waitForStalled(1, 20_000);
    expect(await statusOf(id)).toBe('running');

    world.sim.setFaults({});
    const cancelled = await world.control.cancel(id);
    expect(cancelled.project.status).toBe('cancelled');
    const settled = await waitFor('the aborted session to be recorded', async () => {
      const project = await world.control.getProject(id);
      return project && project.activeSession === null && project.counters.sessions >= 2
        ? project
        : null;
    });
    expect(settled.status).toBe('cancelled');
    const sessions = await world.control.listSessions(id);
    expect(sessions.at(-1)?.outcome).toBe('cancelled');
    // Nothing was chained after the cancel.
    const counts = await world.control.queueCounts();
    expect((counts.waiting ?? 0) + (counts.delayed ?? 0)).toBe(0);

    await world.control.resume(id);
    await waitFor(
      'project completed after resume',
      async () => (await statusOf(id)) === 'completed',
      30_000,
    );
    const transitions = (await world.control.listTransitions(id)).map(
      (transition) => transition.to,
    );
    expect(transitions).toContain('cancelled');
    expect(transitions.at(-1)).toBe('completed');
  });

  it('pauses with a readable reason when the session budget of the project is used up', async () => {
    await startWorker();
    const id = randomProjectId('budget');
    projects.push(id);
    await world.control.createProject({
      id,
      goal: 'Four things\n- one\n- two\n- three\n- four',
      budgets: { maxSessions: 2 },
    });
    await world.control.enqueue(id);
    const paused = await waitFor(
      'project paused',
      async () => {
        const project = await world.control.getProject(id);
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
    world.sim.setFaults({ alwaysFail: 500 });
    const id = randomProjectId('fail');
    projects.push(id);
    await world.control.createProject({ id, goal: 'Doomed\n- never' });
    await world.control.enqueue(id);
    const failed = await waitFor(
      'project failed',
      async () => {
        const project = await world.control.getProject(id);
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
