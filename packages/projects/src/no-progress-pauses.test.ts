import { describe, expect, it } from 'vitest';
import {
  decideAfterSession,
  noProgressReason,
  sessionProgress,
  type ChainInput,
} from './chaining.js';
import { emptyCounters, parseProjectInput } from './project.js';

function input(
  streak: number,
  overrides: Partial<ChainInput> = {},
  budgets: ChainInput['budgets'] = {},
): ChainInput {
  return {
    outcome: 'completed',
    reason: 'end_turn',
    allFeaturesPass: false,
    featuresAfter: { passing: 4, total: 60 },
    abortReason: undefined,
    status: 'running',
    counters: {
      ...emptyCounters(),
      sessions: 9,
      featuresPassing: 4,
      featuresTotal: 60,
      sessionsWithoutProgress: streak,
    },
    budgets,
    lastError: null,
    chainDelayMs: 10,
    retryDelayMs: 100,
    maxConsecutiveFailures: 3,
    ...overrides,
  };
}

describe('a project without progress pauses with reason no_progress', () => {
  it.each([
    // streak, budgets, expected decision
    [0, {}, 'next'],
    [2, {}, 'next'],
    [3, {}, 'paused'],
    [7, {}, 'paused'],
    [3, { maxSessionsWithoutProgress: 5 }, 'next'],
    [5, { maxSessionsWithoutProgress: 5 }, 'paused'],
    [1, { maxSessionsWithoutProgress: 1 }, 'paused'],
  ] as const)(
    'after %i sessions without a newly passing feature (budgets %j): %s',
    (streak, budgets, expected) => {
      const decision = decideAfterSession(input(streak, {}, budgets));
      if (expected === 'next') expect(decision.kind).toBe('next');
      else {
        expect(decision).toEqual({
          kind: 'finish',
          cause: 'no_progress',
          status: 'paused',
          reason: `no_progress: ${streak} sessions in a row without a newly passing feature (4 of 60 pass); look at the progress log, then resume`,
        });
      }
    },
  );

  it('is beaten by completion, cancellation, a lost lease and the failure policy', () => {
    expect(
      decideAfterSession(input(9, { featuresAfter: { passing: 60, total: 60 } })),
    ).toMatchObject({ kind: 'finish', status: 'completed' });
    expect(decideAfterSession(input(9, { status: 'cancelled' }))).toMatchObject({ kind: 'stop' });
    expect(decideAfterSession(input(9, { abortReason: 'lease_lost' }))).toMatchObject({
      kind: 'abandon',
    });
    expect(decideAfterSession(input(9, { outcome: 'failed' }))).toMatchObject({
      kind: 'next',
      jobReason: 'retry',
    });
  });

  it.each([
    // kind, before, after, flipped, abort, expected
    ['resume', 3, 4, ['F4'], undefined, 'progressed'],
    ['resume', 3, 3, [], undefined, 'none'],
    ['resume', 3, 2, [], undefined, 'none'],
    ['init', 0, 0, [], undefined, 'neutral'],
    ['resume', 3, 3, [], 'shutdown', 'neutral'],
    ['resume', 3, 4, ['F4'], 'shutdown', 'progressed'],
  ] as const)(
    'a %s session %i -> %i passing (flipped %j, abort %s) counts as %s',
    (kind, before, after, flipped, abortReason, expected) => {
      expect(
        sessionProgress({
          kind,
          featuresBefore: { passing: before },
          featuresAfter: { passing: after },
          flippedFeatures: flipped,
          abortReason,
        }),
      ).toBe(expected);
    },
  );

  it('the limit is a validated per-project budget', () => {
    expect(
      parseProjectInput({ id: 'p', goal: 'g', budgets: { maxSessionsWithoutProgress: 5 } }).budgets,
    ).toEqual({ maxSessionsWithoutProgress: 5 });
    expect(() =>
      parseProjectInput({ id: 'p', goal: 'g', budgets: { maxSessionsWithoutProgress: 0 } }),
    ).toThrow(/budgets\.maxSessionsWithoutProgress/);
    expect(
      noProgressReason({}, { sessionsWithoutProgress: 2, featuresPassing: 0, featuresTotal: 1 }),
    ).toBeNull();
  });
});
