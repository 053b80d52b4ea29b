import { emptyUsageTotals } from '@baton/context-config';
import type { SessionEvent } from '@baton/session';
import { describe, expect, it } from 'vitest';
import {
  PROJECT_EVENT_TYPES,
  decodeProjectEvent,
  decodeProjectEventJson,
  type KnownProjectEvent,
} from './event-decoder.js';
import type { WorkerEvent } from './events.js';

const at = 1_700_000_000_000;
const base = { v: 1 as const, at, projectId: 'p1' };
const session = { ...base, sessionId: 's1' };
const run = { ...session, sessionNumber: 2, jobId: 'p1:2', workerId: 'w1' };
const usage = {
  inputTokens: 10,
  outputTokens: 20,
  cacheReadInputTokens: 30,
  cacheCreationInputTokens: 40,
  cacheWrite5mInputTokens: 15,
  cacheWrite1hInputTokens: 25,
};
/** A turn's usage as written before the TTL breakdown. */
const { cacheWrite5mInputTokens: _5m, cacheWrite1hInputTokens: _1h, ...usageBeforeTtls } = usage;
const totals = { ...emptyUsageTotals(), ...usage, turns: 1, costUsd: 0.5 };

/** A feature check that passed, as the session records it. */
const passedCheck = {
  featureId: 'F1',
  command: 'npm test -- add',
  passed: true,
  exitCode: 0,
  durationMs: 40,
  outputTail: '1 passed',
  commit: 'abc',
  at,
  trigger: 'flip' as const,
  sessionId: 's1',
};

/** One event of every type, as the session and the worker write them today. */
const written: Array<SessionEvent | WorkerEvent> = [
  {
    ...session,
    type: 'session-start',
    kind: 'init',
    sessionNumber: 1,
    interrupted: false,
    model: 'claude-x',
    sandbox: { mode: 'off', reason: 'opted-out', notice: 'commands run on the host' },
  },
  {
    ...session,
    type: 'turn',
    turn: 1,
    model: 'claude-x',
    responseModel: 'claude-x-1',
    responseId: 'msg_1',
    phase: 'work',
    stopReason: 'tool_use',
    durationMs: 12,
    usage,
    appliedEdits: [
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 2, cleared_input_tokens: 700 },
    ],
    clearedInputTokens: 700,
    cacheInvalidation: { rewrittenInputTokens: 5, costUsd: 0.01, breakEvenRequests: 2 },
    costUsd: 0.5,
    totals,
  },
  {
    ...session,
    type: 'tool-call',
    turn: 1,
    tool: 'bash',
    toolUseId: 'toolu_1',
    summary: 'ls',
    isError: false,
    durationMs: 3,
  },
  {
    ...session,
    type: 'memory-change',
    change: { command: 'create', path: '/memories/a.md', bytes: 5, at },
  },
  {
    ...session,
    type: 'model-fallback',
    from: 'a',
    to: 'b',
    turn: 3,
    status: 529,
    message: 'overloaded',
  },
  { ...session, type: 'api-retry', attempt: 1, status: 500, delayMs: 100, message: 'boom' },
  {
    ...session,
    type: 'context-full',
    turn: 12,
    cause: 'counter',
    promptTokens: 6_900,
    contextWindow: 10_000,
  },
  { ...session, type: 'empty-reply', turn: 4, nudged: true },
  {
    ...session,
    type: 'mcp-server',
    server: 'everything',
    source: 'project',
    transport: 'stdio',
    state: 'ready',
    tools: ['mcp__everything__echo'],
  },
  {
    ...session,
    type: 'checkpoint',
    reason: 'turn',
    commit: 'abc',
    head: 'abc',
    pushed: true,
    hooks: 'passed',
    skipped: [],
  },
  { ...session, type: 'guidance-delivered', guidanceIds: ['g1'], turn: 2, inFirstMessage: false },
  { ...session, type: 'check-passed', evidence: passedCheck },
  {
    ...session,
    type: 'check-failed',
    evidence: { ...passedCheck, passed: false, exitCode: null, stopped: 'timeout' },
  },
  {
    ...session,
    type: 'feature-regressed',
    featureId: 'F1',
    evidence: { ...passedCheck, passed: false, exitCode: 1, trigger: 'regression' },
  },
  {
    ...session,
    type: 'session-end',
    result: {
      sessionId: 's1',
      kind: 'init',
      outcome: 'completed',
      reason: 'done',
      turns: 1,
      usage: totals,
      featuresBefore: { passing: 0, total: 2 },
      featuresAfter: { passing: 2, total: 2 },
      allFeaturesPass: true,
      flippedFeatures: ['F1', 'F2'],
      startedAt: at,
      endedAt: at + 1,
      commits: [],
      progressEntry: 'agent',
      checks: {
        F1: { status: 'verified', evidence: passedCheck },
        F2: { status: 'claimed', evidence: null },
      },
      verification: {
        verified: 1,
        claimed: 1,
        regressed: 0,
        unverified: 0,
        pending: 0,
        regressedIds: [],
        rerun: 1,
        rerunMs: 40,
      },
    },
  },
  { ...base, type: 'project-status', from: 'queued', to: 'running', reason: null },
  { ...base, type: 'session-queued', sessionNumber: 2, jobId: 'p1:2', delayMs: 0, reason: 'chain' },
  { ...run, type: 'session-interrupted' },
  { ...run, type: 'session-claimed', interrupted: true },
  {
    ...base,
    type: 'project-paused',
    by: 'operator',
    runningSessionId: 's1',
    removedJobId: null,
  },
  { ...base, type: 'guidance-sent', guidanceId: 'g1', text: 'hi', runningSessionId: null },
  {
    ...run,
    type: 'workspace-prepared',
    branch: 'baton/p1',
    head: null,
    remoteHead: null,
    recovered: false,
  },
  {
    ...run,
    type: 'memory-snapshot',
    commit: 'c'.repeat(40),
    pushed: true,
    withheld: [{ path: 'notes/.env', reason: 'secret_file_name' }],
  },
  { ...run, type: 'session-released', outcome: 'completed' },
  {
    ...base,
    type: 'webhook-delivery',
    notificationId: 'n1',
    webhookType: 'project.completed',
    target: 'http://127.0.0.1:1',
    ok: true,
    attempts: 1,
    status: 204,
  },
];

describe('decodeProjectEvent', () => {
  it('knows every event the session and the worker write', () => {
    // A writer's new event type (or a field of a new type) does not compile until the decoder
    // knows it: every written event must already be a decoded one.
    const asDecoded = (event: SessionEvent | WorkerEvent): KnownProjectEvent => event;
    expect([...new Set(written.map((event) => asDecoded(event).type))].sort()).toEqual(
      [...PROJECT_EVENT_TYPES].sort(),
    );
  });

  it.each(written.map((event) => [event.type, event] as const))(
    'decodes a %s event as written',
    (_type, event) => {
      expect(decodeProjectEvent(JSON.parse(JSON.stringify(event)))).toEqual(event);
    },
  );

  it('reads back numbers JSON cannot hold: a clear that never pays off stays Infinity', () => {
    const turn = written.find((event) => event.type === 'turn')!;
    const neverPays = {
      ...turn,
      cacheInvalidation: { rewrittenInputTokens: 5, costUsd: 0.01, breakEvenRequests: Infinity },
      durationMs: Number.NaN,
    };
    expect(decodeProjectEventJson(JSON.stringify(neverPays))).toEqual({
      ...neverPays,
      durationMs: 0,
    });
  });

  it('flags turns, session starts and results missing a field the migration fills', () => {
    // The shape of d935052 (the first session runner): no model, responseModel, responseId,
    // cacheInvalidation on turns; no sandbox on session-start; totals without cache-write splits.
    // Stored ones are upgraded once by migrations/event-fields.ts; readers assume the current shape.
    const oldTurn = {
      ...session,
      type: 'turn',
      turn: 4,
      phase: 'work',
      stopReason: 'end_turn',
      durationMs: 9,
      usage: usageBeforeTtls,
      appliedEdits: [],
      clearedInputTokens: 0,
      costUsd: 0.1,
      totals: { inputTokens: 10, outputTokens: 20, costUsd: 0.1 },
    };
    expect(decodeProjectEvent(oldTurn)).toMatchObject({
      type: 'unknown',
      originalType: 'turn',
      problem: expect.stringMatching(/^model: /) as unknown,
      raw: oldTurn,
    });
    const turn = written.find((event) => event.type === 'turn')!;
    expect(decodeProjectEvent({ ...turn, usage: usageBeforeTtls })).toMatchObject({
      type: 'unknown',
      problem: expect.stringMatching(/^usage\.cacheWrite5mInputTokens: /) as unknown,
    });
    const { sandbox: _sandbox, ...oldStart } = written.find(
      (event) => event.type === 'session-start',
    )!;
    expect(decodeProjectEvent(oldStart)).toMatchObject({
      type: 'unknown',
      problem: expect.stringMatching(/^sandbox: /) as unknown,
    });
    const end = written.find((event) => event.type === 'session-end')!;
    const { commits: _commits, ...oldResult } = end.result;
    expect(decodeProjectEvent({ ...end, result: oldResult })).toMatchObject({
      type: 'unknown',
      problem: expect.stringMatching(/^result\.commits: /) as unknown,
    });
    // A tool call's id is still absent in calls recorded before it was carried.
    const oldToolCall = decodeProjectEvent({
      ...session,
      type: 'tool-call',
      turn: 1,
      tool: 'bash',
      summary: 'ls',
      isError: true,
      durationMs: 1,
    });
    expect(oldToolCall).toMatchObject({ type: 'tool-call', isError: true });
  });

  it('turns malformed entries into unknown events that say what was wrong, never throwing', () => {
    expect(decodeProjectEventJson('{"type":"turn",')).toMatchObject({
      type: 'unknown',
      originalType: null,
      problem: 'not JSON',
      raw: '{"type":"turn",',
    });
    expect(decodeProjectEvent(null)).toMatchObject({ type: 'unknown', problem: 'not an object' });
    expect(decodeProjectEvent([1])).toMatchObject({ type: 'unknown', problem: 'not an object' });
    expect(decodeProjectEvent({ ...base })).toMatchObject({
      type: 'unknown',
      at,
      projectId: 'p1',
      problem: 'type: missing',
    });
    expect(decodeProjectEvent({ ...base, type: 'from-the-future', x: 1 })).toMatchObject({
      type: 'unknown',
      originalType: 'from-the-future',
      problem: 'unknown event type from-the-future',
      raw: { ...base, type: 'from-the-future', x: 1 },
    });
    expect(
      decodeProjectEvent({ ...session, type: 'turn', turn: 'two', stopReason: 'x', usage }),
    ).toMatchObject({
      type: 'unknown',
      originalType: 'turn',
      problem: expect.stringMatching(/^turn: /) as unknown,
    });
    expect(
      decodeProjectEvent({ ...base, v: 2, type: 'project-status', to: 'running' }),
    ).toMatchObject({ type: 'unknown', v: 2, problem: expect.stringMatching(/^v: /) as unknown });
  });
});
