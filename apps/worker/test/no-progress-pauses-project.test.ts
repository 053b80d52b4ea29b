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

describe('a worker pauses a project whose sessions stop making progress', () => {
  let prefix: string;
  let control: BatonControl;
  let sim: ModelSim;
  let home: string;
  const cleanups: (() => Promise<unknown>)[] = [];
  const projects: string[] = [];

  beforeEach(async () => {
    prefix = randomPrefix();
    home = await mkdtemp(path.join(os.tmpdir(), 'baton-stall-'));
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

  it('after N resume sessions without a newly passing feature: paused, reason no_progress, a status event, and a resume starts the count again', async () => {
    const worker = await startInProcessWorker({
      prefix,
      runSession,
      client: new Anthropic({ apiKey: 'test-key', baseURL: sim.url, maxRetries: 0 }),
      sessionOptions: () => ({
        retry: { maxRetries: 1, baseDelayMs: 10 },
        endOfSessionMaxTurns: 1,
      }),
    });
    cleanups.push(() => worker.stop());
    const id = randomProjectId('stall');
    projects.push(id);
    // Three turns per session: the agent reads its memory and never reaches a flip.
    await control.createProject({
      id,
      goal: 'Two things\n- first\n- second',
      budgets: { maxSessionsWithoutProgress: 2, session: { maxTurns: 3 } },
    });
    await control.enqueue(id);
    await waitFor(
      'paused',
      async () => (await control.getProject(id))?.status === 'paused',
      60_000,
    );

    const project = (await control.getProject(id))!;
    expect(project.statusReason).toMatch(
      /^no_progress: 2 sessions in a row without a newly passing feature \(0 of 2 pass\)/,
    );
    expect(project.counters.sessions).toBe(3); // init + 2 resumes
    expect(project.counters.sessionsWithoutProgress).toBe(2);
    const events = await control.readEvents(id, { count: 10_000 });
    const paused = events.flatMap(({ event }) =>
      event.type === 'project-status' && event.to === 'paused' ? [event] : [],
    );
    expect(paused).toHaveLength(1);
    expect(String(paused[0]?.reason)).toMatch(/^no_progress: /);

    // A user's resume starts the streak again: two more sessions before the next pause.
    await control.resume(id);
    await waitFor(
      'paused again',
      async () => {
        const again = await control.getProject(id);
        return again?.status === 'paused' && again.counters.sessions === 5;
      },
      60_000,
    );
  });
});
