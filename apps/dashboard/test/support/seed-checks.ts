import type { CheckEvidence, FeatureChecks } from '@baton/session';
import type { TestDashboard } from './dashboard.js';
import { sessionSummary } from './session-summary.js';

/** The commit the seeded evidence names. */
export const SEEDED_COMMIT = 'c0ffee'.repeat(6) + 'abcd';
/** F3's output tail: longer than a badge, shown only on demand. */
export const SEEDED_TAIL = `${'noise\n'.repeat(300)}F3 broken: expected 3 todos, got 2`;

function evidence(featureId: string, passed: boolean, outputTail: string): CheckEvidence {
  return {
    featureId,
    command: `sh features/${featureId.toLowerCase()}.sh`,
    passed,
    exitCode: passed ? 0 : 1,
    durationMs: 1_250,
    outputTail,
    commit: SEEDED_COMMIT,
    at: 1_700_000_000_000,
    trigger: passed ? 'flip' : 'regression',
    sessionId: 's2',
  };
}

/**
 * A project whose check record has a feature in every state, stored as a worker stores it at a
 * session's end: F1 verified, F2 claimed, F3 regressed, F4 refused, F5 failing (never checked),
 * F6 unverified (passing, no record). The project's default check is `sh default-check.sh`.
 */
export async function seedCheckedProject(dashboard: TestDashboard, id: string): Promise<void> {
  const { control, repository } = dashboard;
  await control.createProject({
    id,
    goal: 'G\n- a\n- b',
    verification: { check: 'sh default-check.sh' },
  });
  await repository.transition(id, 'running', { reason: 'test' });
  const features = [
    { id: 'F1', description: 'verified', steps: [], check: 'sh features/f1.sh', passes: true },
    { id: 'F2', description: 'claimed', steps: [], passes: true },
    { id: 'F3', description: 'regressed', steps: [], check: 'sh features/f3.sh', passes: false },
    { id: 'F4', description: 'refused', steps: [], check: 'sh features/f4.sh', passes: false },
    { id: 'F5', description: 'failing', steps: [], check: 'sh features/f5.sh', passes: false },
    { id: 'F6', description: 'unverified', steps: [], passes: true },
  ];
  const store = await control.memoryStore(id);
  await store.write('features.json', JSON.stringify(features), { mode: 'create' });
  const checks: FeatureChecks = {
    F1: { status: 'verified', evidence: evidence('F1', true, 'F1 ok') },
    F2: { status: 'claimed', evidence: null },
    F3: { status: 'regressed', evidence: evidence('F3', false, SEEDED_TAIL) },
    F4: { status: 'refused', evidence: evidence('F4', false, 'F4 missing') },
  };
  await repository.recordSessionEnd(
    id,
    sessionSummary(2, {
      featuresAfter: { passing: 3, total: 6 },
      verification: {
        verified: 1,
        claimed: 1,
        regressed: 1,
        unverified: 1,
        pending: 0,
        regressedIds: ['F3'],
        rerun: 1,
        rerunMs: 1_250,
      },
    }),
    { failed: false, checks },
  );
}
