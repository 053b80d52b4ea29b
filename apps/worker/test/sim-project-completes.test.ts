import { describe, expect, it } from 'vitest';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

describe('a worker process runs a project on the simulator through the real SDK', () => {
  const world = useProcessWorld('baton-worker-');

  it('goes init -> resumes -> completed with Redis memory, events, summaries and metrics', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const worker = await spawnWorker(
      simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_MODEL: 'claude-sonnet-4-6' }),
    );
    workers.push(worker);
    const id = randomProjectId('sim');
    projects.push(id);
    await control.createProject({ id, goal: 'Build a greeter\n- print hello\n- print goodbye' });
    await control.enqueue(id);

    const done = await waitForCompleted(control, id, 45_000);

    expect(done.counters.featuresTotal).toBe(2);
    expect(done.counters.featuresPassing).toBe(2);
    expect(done.counters.sessions).toBeGreaterThanOrEqual(3);
    expect(done.counters.inputTokens).toBeGreaterThan(0);
    const sessions = await control.listSessions(id);
    expect(sessions[0]?.kind).toBe('init');
    expect(sessions.slice(1).every((session) => session.kind === 'resume')).toBe(true);

    const store = await control.memoryStore(id);
    const features = JSON.parse((await store.read('features.json')) ?? '[]') as {
      passes: boolean;
    }[];
    expect(features.map((feature) => feature.passes)).toEqual([true, true]);
    expect(await store.read('progress.md')).toBeTruthy();

    const events = await control.readEvents(id, { count: 10_000 });
    const types = new Set(events.map((entry) => entry.event.type));
    for (const type of [
      'session-start',
      'turn',
      'tool-call',
      'memory-change',
      'session-end',
      'project-status',
    ]) {
      expect(types).toContain(type);
    }

    const metrics = await (await fetch(`http://127.0.0.1:${worker.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/baton_sessions_total\{outcome="completed"\} [1-9]/);
    expect(metrics).toMatch(/baton_model_input_tokens_total [1-9]/);
    expect(metrics).toContain('baton_queue_jobs{state="completed"}');
    const health = await fetch(`http://127.0.0.1:${worker.httpPort}/healthz`);
    expect(health.status).toBe(200);

    const log = worker.logs.find((line) => line.msg === 'session finished');
    expect(log).toMatchObject({ projectId: id });
    expect(log?.sessionId).toBeTruthy();
    expect(log?.jobId).toBeTruthy();
  });
});
