import { describe, expect, it } from 'vitest';
import { startWorldWorker } from './support/in-process-worker.js';
import { createScriptedRunner } from './support/scripted-runner.js';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { controlWorld } from './support/sim-world.js';

describe('a project chains sessions until every feature passes', () => {
  const world = controlWorld();

  it('runs init then one resume per feature and ends completed with counters and summaries', async () => {
    const { control, projects } = world;
    await startWorldWorker(world, { runSession: createScriptedRunner() });
    const id = randomProjectId();
    projects.push(id);

    await control.createProject({ id, goal: 'Build it\n- one\n- two\n- three' });
    await control.enqueue(id);
    const done = await waitForCompleted(control, id);

    expect(done.counters.sessions).toBe(4);
    expect(done.counters.featuresPassing).toBe(3);
    expect(done.counters.featuresTotal).toBe(3);
    expect(done.counters.inputTokens).toBe(400);
    expect(done.counters.costUsd).toBeCloseTo(0.04);
    expect(done.activeSession).toBeNull();
    expect(done.statusReason).toBe('all 3 features pass');

    const sessions = await control.listSessions(id);
    expect(sessions.map((session) => session.kind)).toEqual(['init', 'resume', 'resume', 'resume']);
    expect(sessions.map((session) => session.sessionNumber)).toEqual([1, 2, 3, 4]);

    const transitions = await control.listTransitions(id);
    expect(transitions.map((transition) => transition.to)).toEqual([
      'queued',
      'running',
      'queued',
      'running',
      'queued',
      'running',
      'queued',
      'running',
      'completed',
    ]);
    for (const transition of transitions) expect(transition.at).toBeGreaterThan(0);

    const events = await control.readEvents(id, { count: 1000 });
    const types = events.map((entry) => entry.event.type);
    expect(types.filter((type) => type === 'session-start')).toHaveLength(4);
    expect(types.filter((type) => type === 'session-end')).toHaveLength(4);
    expect(types).toContain('project-status');

    const store = await control.memoryStore(id);
    expect(await store.read('progress.md')).toContain('Session 4');
  });
});
