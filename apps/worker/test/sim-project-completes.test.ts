import { startModelSim, type ModelSim } from '@baton/model-sim';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBatonControl, type BatonControl } from '../src/index.js';
import {
  deletePrefix,
  randomPrefix,
  randomProjectId,
  REDIS_URL,
  waitFor,
} from './support/redis.js';
import { spawnWorker, stopAll, type WorkerProcess } from './support/worker-process.js';

describe('a worker process runs a project on the simulator through the real SDK', () => {
  let prefix: string;
  let control: BatonControl;
  let sim: ModelSim;
  let home: string;
  const workers: WorkerProcess[] = [];
  const projects: string[] = [];

  beforeEach(async () => {
    prefix = randomPrefix();
    home = await mkdtemp(path.join(os.tmpdir(), 'baton-worker-'));
    control = createBatonControl({ url: REDIS_URL, prefix, workspaceRoot: home });
    sim = await startModelSim({ port: 0 });
  });

  afterEach(async () => {
    await stopAll(workers);
    for (const id of projects.splice(0)) await control.deleteProject(id);
    await control.close();
    await sim.close();
    await deletePrefix(REDIS_URL, prefix);
    await rm(home, { recursive: true, force: true });
  });

  it('goes init -> resumes -> completed with Redis memory, events, summaries and metrics', async () => {
    const worker = await spawnWorker({
      REDIS_URL,
      BATON_PREFIX: prefix,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_MODEL: 'claude-sonnet-4-6',
      BATON_CHAIN_DELAY_MS: '0',
    });
    workers.push(worker);
    const id = randomProjectId('sim');
    projects.push(id);
    await control.createProject({ id, goal: 'Build a greeter\n- print hello\n- print goodbye' });
    await control.enqueue(id);

    const done = await waitFor(
      'project completed',
      async () => {
        const project = await control.getProject(id);
        if (project?.status === 'failed') throw new Error(`failed: ${project.statusReason}`);
        return project?.status === 'completed' ? project : null;
      },
      45_000,
    );

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
