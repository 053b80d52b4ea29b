import {
  openCommandMonitor,
  REDIS_URL,
  randomHex,
  type CommandMonitor,
  type SentCommand,
} from '@baton/test-support';
import type { SessionSummary } from '@baton/projects';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

// The checklist shows every feature and the session that last flipped it. A project 500
// sessions in must not read 500 session summaries for that: pinned by the commands MONITOR sees.
const SESSIONS = 500;

let monitor: CommandMonitor;
let dashboard: TestDashboard;
let redis: Redis;

beforeAll(async () => {
  monitor = await openCommandMonitor();
  redis = new Redis(REDIS_URL);
});
afterAll(() => {
  monitor.close();
  redis.disconnect();
});
beforeEach(async () => {
  dashboard = await startTestDashboard();
});
afterEach(async () => {
  await dashboard.close();
});

function summary(sessionNumber: number, flippedFeatures: string[] = []): SessionSummary {
  return {
    sessionId: `s${sessionNumber}`,
    sessionNumber,
    kind: 'resume',
    outcome: 'completed',
    reason: 'end_turn',
    interrupted: false,
    turns: 20,
    inputTokens: 20_000,
    outputTokens: 1_000,
    clearedInputTokens: 0,
    costUsd: 0.02,
    featuresBefore: { passing: 0, total: 3 },
    featuresAfter: { passing: 0, total: 3 },
    flippedFeatures,
    startedAt: sessionNumber,
    endedAt: sessionNumber + 1,
    jobId: `j${sessionNumber}`,
    workerId: 'test',
  };
}

const FLIPS: Record<number, string[]> = { 10: ['F1'], 400: ['F2'], 450: ['F1'] };

async function checklist(id: string) {
  const response = await dashboard.request(`/api/projects/${id}/checklist`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    rows: Array<{ id: string; passes: boolean; flippedInSession: number | null }>;
  };
}

function flippedIn(view: Awaited<ReturnType<typeof checklist>>) {
  return Object.fromEntries(view.rows.map((row) => [row.id, row.flippedInSession]));
}

function on(sent: SentCommand[], key: string): SentCommand[] {
  return sent.filter((entry) => entry.args.includes(key));
}

describe("the checklist costs its features, not the project's sessions", () => {
  it('reads one flip hash for a project with 500 sessions; older summaries are folded in once', async () => {
    const id = `flips-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'Long\n- one' });
    await dashboard.repository.transition(id, 'paused', { reason: 'test' });
    const sessionsKey = dashboard.control.keys.sessions(id);
    const flipsKey = dashboard.control.keys.featureFlips(id);
    const projectKey = dashboard.control.keys.project(id);
    // 499 summaries stored as a worker stored them before the flip hash existed (the list only)...
    const pipeline = redis.pipeline();
    for (let number = 1; number < SESSIONS; number += 1) {
      pipeline.rpush(sessionsKey, JSON.stringify(summary(number, FLIPS[number])));
    }
    await pipeline.exec();
    // ... and the newest one as a worker stores it now.
    await dashboard.repository.recordSessionEnd(id, summary(SESSIONS, ['F3']), { failed: false });
    const store = await dashboard.control.memoryStore(id);
    const features = ['F1', 'F2', 'F3', 'F4'].map((feature) => ({
      id: feature,
      description: feature,
      steps: [],
      passes: feature !== 'F4',
    }));
    await store.write('features.json', JSON.stringify(features), { mode: 'create' });

    let first = await checklist(id);
    const firstSent = await monitor.commandsSentBy(dashboard.prefix, async () => {
      first = await checklist(id);
    });
    expect(flippedIn(first)).toEqual({ F1: 450, F2: 400, F3: SESSIONS, F4: null });
    // The first read of this project already folded the old summaries in: nothing of the list now.
    expect(on(firstSent, sessionsKey)).toEqual([]);
    expect(firstSent.map((entry) => [entry.command, entry.args[0]])).toEqual([
      ['hgetall', projectKey], // the project exists
      ['hget', projectKey],
      ['hgetall', flipsKey],
    ]);

    // A session flipping F2 again: the newest flip wins, still without reading the summaries.
    await dashboard.repository.recordSessionEnd(id, summary(SESSIONS + 1, ['F2']), {
      failed: false,
    });
    let next = first;
    const nextSent = await monitor.commandsSentBy(dashboard.prefix, async () => {
      next = await checklist(id);
    });
    expect(flippedIn(next)).toEqual({ F1: 450, F2: SESSIONS + 1, F3: SESSIONS, F4: null });
    expect(on(nextSent, sessionsKey)).toEqual([]);
    expect(on(nextSent, flipsKey).map((entry) => entry.command)).toEqual(['hgetall']);
  });

  it('folds summaries stored before the flip hash in once, keeping flips recorded since', async () => {
    const id = `fold-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'Old\n- one' });
    const sessionsKey = dashboard.control.keys.sessions(id);
    await redis.rpush(sessionsKey, JSON.stringify(summary(1, ['F1'])));
    await dashboard.repository.recordSessionEnd(id, summary(2, ['F1']), { failed: false });
    await redis.rpush(sessionsKey, JSON.stringify(summary(3, ['F2'])));
    const store = await dashboard.control.memoryStore(id);
    await store.write(
      'features.json',
      JSON.stringify([
        { id: 'F1', description: 'one', steps: [], passes: true },
        { id: 'F2', description: 'two', steps: [], passes: true },
      ]),
      { mode: 'create' },
    );
    const sent = await monitor.commandsSentBy(dashboard.prefix, async () => {
      expect(flippedIn(await checklist(id))).toEqual({ F1: 2, F2: 3 });
    });
    expect(on(sent, sessionsKey).map((entry) => entry.command)).toEqual(['lrange']);
    const again = await monitor.commandsSentBy(dashboard.prefix, async () => {
      expect(flippedIn(await checklist(id))).toEqual({ F1: 2, F2: 3 });
    });
    expect(on(again, sessionsKey)).toEqual([]);
  });
});
