import { describe, expect, it } from 'vitest';
import { decideAfterSession, uselessContextFill, type ChainInput } from './chaining.js';
import { emptyCounters } from './project.js';

function input(overrides: Partial<ChainInput> = {}): ChainInput {
  return {
    outcome: 'completed',
    reason: 'end_turn',
    allFeaturesPass: false,
    featuresAfter: { passing: 1, total: 3 },
    abortReason: undefined,
    status: 'running',
    counters: { ...emptyCounters(), sessions: 2 },
    budgets: {},
    lastError: null,
    chainDelayMs: 1000,
    retryDelayMs: 100,
    maxConsecutiveFailures: 3,
    ...overrides,
  };
}

describe('decideAfterSession', () => {
  it('queues the next resume after the chain delay while features fail', () => {
    expect(decideAfterSession(input())).toEqual({
      kind: 'next',
      cause: 'chain',
      delayMs: 1000,
      jobReason: 'chain',
      reason: '2 of 3 features still failing',
    });
  });

  it('completes when every feature passes, even with budgets used up', () => {
    const decision = decideAfterSession(
      input({ featuresAfter: { passing: 3, total: 3 }, budgets: { maxSessions: 2 } }),
    );
    expect(decision).toEqual({
      kind: 'finish',
      cause: 'completed',
      status: 'completed',
      reason: 'all 3 features pass',
    });
  });

  it('completes only when every last check passed on the final commit', () => {
    const pending = decideAfterSession(
      input({ featuresAfter: { passing: 3, total: 3 }, allFeaturesPass: true, checksPending: 2 }),
    );
    expect(pending).toMatchObject({
      kind: 'next',
      reason: 'all 3 features pass; 2 checks still to re-run on the final commit',
    });
    const done = decideAfterSession(
      input({ featuresAfter: { passing: 3, total: 3 }, allFeaturesPass: true, checksPending: 0 }),
    );
    expect(done).toMatchObject({ kind: 'finish', status: 'completed' });
  });

  it('pauses, never fails or completes, when the work did not reach the remote', () => {
    const problem = 'checkpoint 1a2b3c4d5e6f was not pushed: cannot push baton/x to /r: gone';
    for (const overrides of [
      { featuresAfter: { passing: 3, total: 3 }, allFeaturesPass: true },
      { outcome: 'failed', counters: { ...emptyCounters(), consecutiveFailures: 3 } },
      {},
    ]) {
      expect(decideAfterSession(input({ ...overrides, workspaceProblem: problem }))).toEqual({
        kind: 'finish',
        cause: 'workspace',
        status: 'paused',
        reason: problem,
      });
    }
    // A user's cancel still wins.
    expect(
      decideAfterSession(input({ status: 'cancelled', workspaceProblem: problem })),
    ).toMatchObject({ kind: 'stop' });
  });

  it('pauses with the budget named when sessions, USD or tokens run out', () => {
    expect(decideAfterSession(input({ budgets: { maxSessions: 2 } }))).toMatchObject({
      kind: 'finish',
      status: 'paused',
      reason: 'budget: 2 of 2 sessions used',
      budgetReached: true,
    });
    const spent = { ...emptyCounters(), sessions: 2, costUsd: 1.5 };
    expect(decideAfterSession(input({ counters: spent, budgets: { maxUsd: 1 } }))).toMatchObject({
      status: 'paused',
      reason: 'budget: $1.5000 spent of $1',
    });
    const tokens = { ...emptyCounters(), inputTokens: 90, outputTokens: 20 };
    expect(
      decideAfterSession(input({ counters: tokens, budgets: { maxTokens: 100 } })),
    ).toMatchObject({
      status: 'paused',
      reason: 'budget: 110 tokens used of 100',
    });
  });

  it('retries failed sessions with exponential backoff, then fails with the last error', () => {
    const failed = (failures: number) =>
      input({
        outcome: 'failed',
        error: 'HTTP 500 from the API',
        counters: { ...emptyCounters(), sessions: failures, consecutiveFailures: failures },
      });
    expect(decideAfterSession(failed(1))).toMatchObject({
      kind: 'next',
      delayMs: 100,
      jobReason: 'retry',
    });
    expect(decideAfterSession(failed(2))).toMatchObject({ kind: 'next', delayMs: 200 });
    expect(decideAfterSession(failed(3))).toEqual({
      kind: 'finish',
      cause: 'failed',
      status: 'failed',
      reason: '3 failed sessions in a row; last error: HTTP 500 from the API',
    });
  });

  it('treats a session that leaves no checklist as failed', () => {
    expect(decideAfterSession(input({ featuresAfter: { passing: 0, total: 0 } }))).toMatchObject({
      kind: 'next',
      jobReason: 'retry',
    });
  });

  it('stops after a session an operator paused, whatever the session did', () => {
    const stop = { kind: 'stop', cause: 'operator_pause', reason: 'paused by operator' };
    expect(decideAfterSession(input({ status: 'paused', abortReason: 'paused' }))).toEqual(stop);
    // Paused between the session's end and the decision: no next session either.
    expect(decideAfterSession(input({ status: 'paused' }))).toEqual(stop);
    // A paused init that wrote no checklist is not a failure.
    expect(
      decideAfterSession(
        input({
          abortReason: 'paused',
          outcome: 'paused',
          featuresAfter: { passing: 0, total: 0 },
        }),
      ),
    ).toEqual(stop);
  });

  it('respects a cancel that arrived during the session', () => {
    expect(decideAfterSession(input({ status: 'cancelled' }))).toEqual({
      kind: 'stop',
      cause: 'cancelled',
      reason: 'cancelled',
    });
    expect(decideAfterSession(input({ abortReason: 'cancelled' }))).toEqual({
      kind: 'stop',
      cause: 'cancelled',
      reason: 'cancelled',
    });
  });

  it('hands a shut-down session on at once, and leaves a lost lease alone', () => {
    expect(
      decideAfterSession(input({ outcome: 'cancelled', abortReason: 'shutdown' })),
    ).toMatchObject({
      kind: 'next',
      delayMs: 0,
      jobReason: 'shutdown',
    });
    expect(decideAfterSession(input({ abortReason: 'lease_lost' }))).toMatchObject({
      kind: 'abandon',
    });
    expect(
      decideAfterSession(input({ abortReason: 'lock_lost', status: 'cancelled' })),
    ).toMatchObject({
      kind: 'abandon',
    });
  });
});

describe('decideAfterSession: what the API answered', () => {
  it('a full context after useful work is an ordinary session: the next one continues', () => {
    const decision = decideAfterSession(
      input({
        outcome: 'budget_exhausted',
        stopReason: 'context_full',
        contextFull: { turn: 12, useful: true },
        counters: { ...emptyCounters(), sessions: 4, sessionsWithoutProgress: 0 },
      }),
    );
    expect(decision).toMatchObject({ kind: 'next', jobReason: 'chain' });
  });

  it('a full context with nothing useful twice in a row pauses with context_full and what to change', () => {
    const once = input({
      outcome: 'budget_exhausted',
      stopReason: 'context_full',
      contextFull: { turn: 3, useful: false },
      counters: { ...emptyCounters(), sessions: 4, uselessContextFills: 1 },
    });
    expect(decideAfterSession(once)).toMatchObject({ kind: 'next' });
    const twice = { ...once, counters: { ...once.counters, uselessContextFills: 2 } };
    const decision = decideAfterSession(twice);
    expect(decision).toMatchObject({ kind: 'finish', status: 'paused', cause: 'context_full' });
    expect(decision.reason).toMatch(/^context_full: the context window filled at turn 3 .*resume$/);
  });

  it('sessions without progress that did not fill their context do not make a useless fill a second one', () => {
    // Two sessions ended without progress (their context never filled), then one filled it:
    // that is one useless fill, not two; the no-progress rule watches the others.
    const decision = decideAfterSession(
      input({
        outcome: 'budget_exhausted',
        stopReason: 'context_full',
        contextFull: { turn: 3, useful: false },
        counters: {
          ...emptyCounters(),
          sessions: 4,
          sessionsWithoutProgress: 2,
          uselessContextFills: 1,
        },
      }),
    );
    expect(decision).toMatchObject({ kind: 'next', cause: 'chain' });
  });

  it('the useless-fill streak: a useless fill adds one, any other session that ran ends it, a cut-short one leaves it', () => {
    expect(uselessContextFill({ contextFull: { turn: 3, useful: false } })).toBe(true);
    expect(uselessContextFill({ contextFull: { turn: 9, useful: true } })).toBe(false);
    expect(uselessContextFill({})).toBe(false);
    expect(uselessContextFill({ abortReason: 'shutdown' })).toBeUndefined();
  });

  it('a model the API does not know (404) pauses with model_not_found and the one line naming it', () => {
    const decision = decideAfterSession(
      input({
        outcome: 'failed',
        stopReason: 'model_not_found',
        reason:
          'The API does not know the model "claude-nope" (404 not_found_error); name a model the API serves.',
        counters: { ...emptyCounters(), consecutiveFailures: 1 },
      }),
    );
    expect(decision).toEqual({
      kind: 'finish',
      cause: 'model_not_found',
      status: 'paused',
      reason:
        'model_not_found: The API does not know the model "claude-nope" (404 not_found_error); name a model the API serves.',
    });
  });

  it('a refused API key pauses with reason auth, before any failure is counted', () => {
    const decision = decideAfterSession(
      input({
        outcome: 'failed',
        stopReason: 'auth',
        reason: 'The API refused the API key: 401 invalid x-api-key.',
        counters: { ...emptyCounters(), consecutiveFailures: 1 },
      }),
    );
    expect(decision).toEqual({
      kind: 'finish',
      cause: 'auth',
      status: 'paused',
      reason: 'auth: The API refused the API key: 401 invalid x-api-key.',
    });
  });
});
