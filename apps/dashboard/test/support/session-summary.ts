import type { SessionSummary } from '@baton/projects';

/**
 * A finished session's summary as a worker records it, for seeding session history: session
 * `n` has id `s<n>`, job `j<n>` and starts a second after session `n - 1`. No vitest import, so
 * the bench uses it too.
 */
export function sessionSummary(
  sessionNumber: number,
  overrides: Partial<SessionSummary> = {},
): SessionSummary {
  return {
    sessionId: `s${sessionNumber}`,
    sessionNumber,
    kind: 'resume',
    outcome: 'end_turn',
    reason: 'done',
    interrupted: false,
    turns: 20,
    inputTokens: 20_000,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    outputTokens: 1_000,
    clearedInputTokens: 0,
    costUsd: 0.02,
    featuresBefore: { passing: 0, total: 1 },
    featuresAfter: { passing: 0, total: 1 },
    flippedFeatures: [],
    startedAt: 1_700_000_000_000 + sessionNumber * 1_000,
    endedAt: 1_700_000_000_500 + sessionNumber * 1_000,
    jobId: `j${sessionNumber}`,
    workerId: 'test',
    model: 'sim-sonnet',
    commits: [],
    ...overrides,
  };
}
