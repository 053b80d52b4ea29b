import { runRedisMigrations } from '@baton/projects';
import { randomHex } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { commandsOn, useMonitoredDashboard } from './support/monitored-dashboard.js';
import { sessionSummary } from './support/session-summary.js';

// The checklist shows every feature and the session that last flipped it. A project 500
// sessions in must not read 500 session summaries for that: pinned by the commands MONITOR sees.
const SESSIONS = 500;

const cost = useMonitoredDashboard();

const FLIPS: Record<number, string[]> = { 10: ['F1'], 400: ['F2'], 450: ['F1'] };

async function checklist(id: string) {
  const response = await cost.dashboard.request(`/api/projects/${id}/checklist`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    rows: Array<{ id: string; passes: boolean; flippedInSession: number | null }>;
  };
}

function flippedIn(view: Awaited<ReturnType<typeof checklist>>) {
  return Object.fromEntries(view.rows.map((row) => [row.id, row.flippedInSession]));
}

describe("the checklist costs its features, not the project's sessions", () => {
  /** What `baton up` and worker start run before anything reads (the flip fold-in among them). */
  async function migrate(): Promise<void> {
    // The summaries were stored the old way, after creating the project on a fresh prefix recorded
    // every migration as applied: forget that record, as an earlier version kept none.
    await cost.redis.del(cost.dashboard.control.keys.migrations);
    await runRedisMigrations({
      redis: cost.redis,
      keys: cost.dashboard.control.keys,
      legacyMemoryPrefix: cost.dashboard.memoryPrefix,
    });
  }

  it('reads one flip hash for a project with 500 sessions; older summaries are folded in by the migration', async () => {
    const id = `flips-${randomHex()}`;
    await cost.dashboard.control.createProject({ id, goal: 'Long\n- one' });
    await cost.dashboard.repository.transition(id, 'paused', { reason: 'test' });
    const sessionsKey = cost.dashboard.control.keys.sessions(id);
    const flipsKey = cost.dashboard.control.keys.featureFlips(id);
    const projectKey = cost.dashboard.control.keys.project(id);
    // 499 summaries stored as a worker stored them before the flip hash existed (the list only)...
    const pipeline = cost.redis.pipeline();
    for (let number = 1; number < SESSIONS; number += 1) {
      pipeline.rpush(
        sessionsKey,
        JSON.stringify(sessionSummary(number, { flippedFeatures: FLIPS[number] ?? [] })),
      );
    }
    await pipeline.exec();
    // ... and the newest one as a worker stores it now.
    await cost.dashboard.repository.recordSessionEnd(
      id,
      sessionSummary(SESSIONS, { flippedFeatures: ['F3'] }),
      { failed: false },
    );
    const store = await cost.dashboard.control.memoryStore(id);
    const features = ['F1', 'F2', 'F3', 'F4'].map((feature) => ({
      id: feature,
      description: feature,
      steps: [],
      passes: feature !== 'F4',
    }));
    await store.write('features.json', JSON.stringify(features), { mode: 'create' });
    await migrate();

    let first = await checklist(id);
    const firstSent = await cost.monitor.commandsSentBy(cost.dashboard.prefix, async () => {
      first = await checklist(id);
    });
    expect(flippedIn(first)).toEqual({ F1: 450, F2: 400, F3: SESSIONS, F4: null });
    // The migration folded the old summaries in: the read touches nothing of the list.
    expect(commandsOn(firstSent, sessionsKey)).toEqual([]);
    expect(firstSent.map((entry) => [entry.command, entry.args[0]])).toEqual([
      ['hgetall', projectKey], // the project exists
      ['hgetall', flipsKey],
    ]);

    // A session flipping F2 again: the newest flip wins, still without reading the summaries.
    await cost.dashboard.repository.recordSessionEnd(
      id,
      sessionSummary(SESSIONS + 1, { flippedFeatures: ['F2'] }),
      {
        failed: false,
      },
    );
    let next = first;
    const nextSent = await cost.monitor.commandsSentBy(cost.dashboard.prefix, async () => {
      next = await checklist(id);
    });
    expect(flippedIn(next)).toEqual({ F1: 450, F2: SESSIONS + 1, F3: SESSIONS, F4: null });
    expect(commandsOn(nextSent, sessionsKey)).toEqual([]);
    expect(commandsOn(nextSent, flipsKey).map((entry) => entry.command)).toEqual(['hgetall']);
  });

  it('the migration folds summaries stored before the flip hash in, keeping flips recorded since', async () => {
    const id = `fold-${randomHex()}`;
    await cost.dashboard.control.createProject({ id, goal: 'Old\n- one' });
    const sessionsKey = cost.dashboard.control.keys.sessions(id);
    await cost.redis.rpush(
      sessionsKey,
      JSON.stringify(sessionSummary(1, { flippedFeatures: ['F1'] })),
    );
    await cost.dashboard.repository.recordSessionEnd(
      id,
      sessionSummary(2, { flippedFeatures: ['F1'] }),
      { failed: false },
    );
    await cost.redis.rpush(
      sessionsKey,
      JSON.stringify(sessionSummary(3, { flippedFeatures: ['F2'] })),
    );
    const store = await cost.dashboard.control.memoryStore(id);
    await store.write(
      'features.json',
      JSON.stringify([
        { id: 'F1', description: 'one', steps: [], passes: true },
        { id: 'F2', description: 'two', steps: [], passes: true },
      ]),
      { mode: 'create' },
    );
    const migrated = await cost.monitor.commandsSentBy(cost.dashboard.prefix, migrate);
    // One read by the flip fold-in, one each by the summary-fields and summary-commits migrations
    // (which find them complete).
    expect(commandsOn(migrated, sessionsKey).map((entry) => entry.command)).toEqual([
      'lrange',
      'lrange',
      'lrange',
    ]);
    const sent = await cost.monitor.commandsSentBy(cost.dashboard.prefix, async () => {
      expect(flippedIn(await checklist(id))).toEqual({ F1: 2, F2: 3 });
    });
    expect(commandsOn(sent, sessionsKey)).toEqual([]);
  });
});
