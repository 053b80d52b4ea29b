import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomHex } from '@baton/test-support';
import { ProjectError, type ProjectLog, type SessionSummary } from '../../src/index.js';
import type { NewProjectRecord } from '../../src/project-log.js';

/** A fresh, empty log and how to throw it away. */
export interface ProjectLogFixture {
  log: ProjectLog;
  cleanup(): Promise<void>;
}

/** A new project's record, as `baton run` or the control API would create it. */
export function newProjectRecord(
  id: string,
  overrides: Partial<NewProjectRecord> = {},
): NewProjectRecord {
  return {
    id,
    goal: 'Two things\n- first\n- second',
    workspace: null,
    adoptWorkspace: false,
    model: null,
    fallbackModel: null,
    budgets: {},
    contextPreset: 'coding',
    context: {},
    sandbox: null,
    verification: null,
    createdAt: Date.now(),
    repo: null,
    base: null,
    baseCommit: null,
    branch: `baton/${id}`,
    skipHooks: false,
    ...overrides,
  };
}

/** A finished session's summary with the numbers a test cares about. */
export function sessionSummary(overrides: Partial<SessionSummary> = {}): SessionSummary {
  return {
    sessionId: `s-${randomHex(4)}`,
    sessionNumber: 1,
    kind: 'resume',
    outcome: 'completed',
    reason: 'done',
    interrupted: false,
    turns: 3,
    inputTokens: 100,
    cacheReadInputTokens: 10,
    cacheCreationInputTokens: 5,
    outputTokens: 20,
    clearedInputTokens: 0,
    costUsd: 0.25,
    featuresBefore: { passing: 0, total: 2 },
    featuresAfter: { passing: 1, total: 2 },
    flippedFeatures: ['F1'],
    startedAt: 1,
    endedAt: 2,
    jobId: 'job-1',
    workerId: 'w1',
    model: 'sim-sonnet',
    commits: [],
    ...overrides,
  };
}

/**
 * The behaviour every `ProjectLog` adapter must have: the Redis `ProjectRepository` and the
 * `FileProjectLog` both run it, so the session chain sees the same thing on either.
 */
export function describeProjectLogConformance(
  name: string,
  setUp: () => Promise<ProjectLogFixture>,
): void {
  describe(`ProjectLog conformance: ${name}`, () => {
    let fixture: ProjectLogFixture;
    let log: ProjectLog;
    let id: string;

    beforeEach(async () => {
      fixture = await setUp();
      log = fixture.log;
      id = `p-${randomHex(4)}`;
    });
    afterEach(async () => {
      await log.delete(id);
      await fixture.cleanup();
    });

    it('creates a queued project with zero counters, once per id', async () => {
      const created = await log.create(newProjectRecord(id, { lastCheckpoint: 'abc123' }));
      expect(created).toMatchObject({
        id,
        status: 'queued',
        statusReason: 'created',
        activeSession: null,
        lastError: null,
        lastCheckpoint: 'abc123',
        counters: { sessions: 0, sessionsStarted: 0, costUsd: 0, consecutiveFailures: 0 },
      });
      expect(await log.get(id)).toEqual(created);
      await expect(log.create(newProjectRecord(id))).rejects.toMatchObject({ code: 'conflict' });
      expect(await log.get(`${id}-none`)).toBeNull();
      const missing = await log.require(`${id}-none`).catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(ProjectError);
      expect(missing).toMatchObject({ code: 'not_found' });
    });

    it('moves the status only from an allowed one, records the move and appends one event', async () => {
      await log.create(newProjectRecord(id));
      expect(
        await log.transition(id, 'running', { from: ['queued'], reason: 'session 1' }),
      ).toEqual({
        ok: true,
        from: 'queued',
      });
      expect(await log.transition(id, 'running', { from: ['queued'] })).toEqual({
        ok: false,
        current: 'running',
      });
      expect(
        await log.transition(id, 'paused', { reason: 'budget: x', budgetReached: true }),
      ).toEqual({ ok: true, from: 'running' });
      expect(await log.transition(`${id}-none`, 'running')).toEqual({ ok: false, current: null });
      const project = await log.require(id);
      expect(project).toMatchObject({ status: 'paused', statusReason: 'budget: x' });
      expect(
        (await log.transitions(id)).map(({ from, to, reason }) => ({ from, to, reason })),
      ).toEqual([
        { from: null, to: 'queued', reason: 'created' },
        { from: 'queued', to: 'running', reason: 'session 1' },
        { from: 'running', to: 'paused', reason: 'budget: x' },
      ]);
      const events = (await log.readEvents(id)).map(({ event }) => event);
      expect(events).toEqual([
        expect.objectContaining({ type: 'project-status', from: 'queued', to: 'running' }),
        expect.objectContaining({
          type: 'project-status',
          from: 'running',
          to: 'paused',
          budgetReached: true,
        }),
      ]);
    });

    it('marks a session start, and counts an interruption only when the last one never ended', async () => {
      await log.create(newProjectRecord(id));
      const active = {
        sessionId: 's1',
        sessionNumber: 1,
        jobId: 'j1',
        workerId: 'w1',
        startedAt: 5,
      };
      await log.markSessionStart(id, active, false, {
        kind: 'none',
        reason: 'tests',
      } as never);
      expect(await log.require(id)).toMatchObject({
        activeSession: active,
        counters: { sessionsStarted: 1, interruptions: 0 },
        sessionSandbox: { kind: 'none' },
      });
      await log.markSessionStart(id, { ...active, sessionId: 's2' }, true);
      expect(await log.require(id)).toMatchObject({
        activeSession: { sessionId: 's2' },
        counters: { sessionsStarted: 1, interruptions: 1 },
      });
    });

    it('records a session end: counters add up, the streaks move, the summary is kept', async () => {
      await log.create(newProjectRecord(id));
      const active = {
        sessionId: 's1',
        sessionNumber: 1,
        jobId: 'j1',
        workerId: 'w1',
        startedAt: 5,
      };
      await log.markSessionStart(id, active, false);
      const first = sessionSummary({ sessionId: 's1', error: 'HTTP 500' });
      await log.recordSessionEnd(id, first, {
        failed: true,
        progress: 'none',
        uselessContextFill: true,
      });
      let project = await log.require(id);
      expect(project.activeSession).toBeNull();
      expect(project.lastError).toBe('HTTP 500');
      expect(project.counters).toMatchObject({
        sessions: 1,
        inputTokens: 100,
        cacheReadInputTokens: 10,
        cacheCreationInputTokens: 5,
        outputTokens: 20,
        featuresPassing: 1,
        featuresTotal: 2,
        consecutiveFailures: 1,
        sessionsWithoutProgress: 1,
        uselessContextFills: 1,
        // A session without verification leaves the counts as they were.
        featuresVerified: 0,
        featuresClaimed: 0,
        featuresRegressed: 0,
      });
      expect(project.counters.costUsd).toBeCloseTo(0.25, 9);
      const second = sessionSummary({ sessionId: 's2', sessionNumber: 2, costUsd: 0.5 });
      await log.recordSessionEnd(id, second, {
        failed: false,
        progress: 'progressed',
        uselessContextFill: false,
      });
      project = await log.require(id);
      expect(project.counters).toMatchObject({
        sessions: 2,
        consecutiveFailures: 0,
        sessionsWithoutProgress: 0,
        uselessContextFills: 0,
      });
      expect(project.counters.costUsd).toBeCloseTo(0.75, 9);
      await log.recordSessionEnd(id, sessionSummary({ sessionNumber: 3 }), {
        failed: true,
        progress: 'none',
        uselessContextFill: true,
      });
      // A session cut short (undefined) leaves the streak as it is.
      await log.recordSessionEnd(id, sessionSummary({ sessionNumber: 4 }), { failed: false });
      expect((await log.require(id)).counters.uselessContextFills).toBe(1);
      await log.resetFailures(id);
      expect((await log.require(id)).counters).toMatchObject({
        consecutiveFailures: 0,
        sessionsWithoutProgress: 0,
        uselessContextFills: 0,
      });
      expect((await log.listSessions(id)).map((summary) => summary.sessionNumber)).toEqual([
        1, 2, 3, 4,
      ]);
      expect((await log.listSessions(id))[0]).toEqual(first);
    });

    it('keeps the check record: each session end lays its changed entries over it, with the counts', async () => {
      await log.create(newProjectRecord(id));
      expect(await log.readChecks(id)).toEqual({});
      const evidence = (featureId: string, passed: boolean, at: number) => ({
        featureId,
        command: `./check ${featureId}`,
        passed,
        exitCode: passed ? 0 : 1,
        durationMs: 12,
        outputTail: passed ? 'ok' : 'expected 2, got 3',
        commit: `c${at}`,
        at,
        trigger: 'flip' as const,
        sessionId: `s${at}`,
      });
      const verification = (verified: number, regressed: number) => ({
        verified,
        claimed: 1,
        regressed,
        unverified: 0,
        pending: 0,
        regressedIds: [],
        rerun: 0,
        rerunMs: 0,
      });
      await log.recordSessionEnd(id, sessionSummary({ verification: verification(1, 0) }), {
        failed: false,
        checks: {
          F1: { status: 'verified', evidence: evidence('F1', true, 1) },
          F2: { status: 'claimed', evidence: null },
        },
      });
      await log.recordSessionEnd(
        id,
        sessionSummary({ sessionNumber: 2, verification: verification(0, 1) }),
        {
          failed: false,
          checks: { F1: { status: 'regressed', evidence: evidence('F1', false, 2) } },
        },
      );
      expect(await log.readChecks(id)).toEqual({
        F1: { status: 'regressed', evidence: evidence('F1', false, 2) },
        F2: { status: 'claimed', evidence: null },
      });
      expect((await log.require(id)).counters).toMatchObject({
        featuresVerified: 0,
        featuresClaimed: 1,
        featuresRegressed: 1,
      });
      expect((await log.listSessions(id))[1]?.verification).toEqual(verification(0, 1));
      await log.delete(id);
      expect(await log.readChecks(id)).toEqual({});
    });

    it('keeps the last acknowledged checkpoint', async () => {
      await log.create(newProjectRecord(id));
      await log.setLastCheckpoint(id, 'c0ffee');
      expect((await log.require(id)).lastCheckpoint).toBe('c0ffee');
    });

    it('reads events back in order, continuing after a cursor', async () => {
      await log.create(newProjectRecord(id));
      const ids: string[] = [];
      for (let index = 0; index < 5; index += 1) {
        ids.push(
          await log.appendEvent(id, { v: 1, type: 'custom-test', at: index, projectId: id }),
        );
      }
      const first = await log.readEvents(id, { count: 2 });
      expect(first.map(({ event }) => event.at)).toEqual([0, 1]);
      expect(first.map((entry) => entry.id)).toEqual(ids.slice(0, 2));
      const rest = await log.readEvents(id, { fromId: first[1]!.id, count: 10 });
      expect(rest.map(({ event }) => event.at)).toEqual([2, 3, 4]);
      // The id an append returns is a cursor too.
      const last = await log.readEvents(id, { fromId: ids[3]! });
      expect(last.map(({ event }) => event.at)).toEqual([4]);
    });

    it('forgets everything about a deleted project', async () => {
      await log.create(newProjectRecord(id));
      await log.appendEvent(id, { v: 1, type: 'custom-test', at: 1, projectId: id });
      await log.recordSessionEnd(id, sessionSummary(), { failed: false });
      await log.delete(id);
      expect(await log.get(id)).toBeNull();
      expect(await log.readEvents(id)).toEqual([]);
      expect(await log.listSessions(id)).toEqual([]);
      await log.create(newProjectRecord(id));
      expect((await log.require(id)).counters.sessions).toBe(0);
    });
  });
}
