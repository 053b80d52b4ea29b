import type { SessionResult } from '@baton/session';
import { CHECKPOINT_FAILED_REASON, decideAfterSession } from '../chaining.js';
import { describe, expect, it } from 'vitest';
import { unpushedCheckpoint } from './session-workspace.js';

describe('a session whose last checkpoint could not be committed', () => {
  it('pauses the project with checkpoint_failed and the error, even with every feature passing', () => {
    const result = {
      outcome: 'completed',
      checkpointError: "git add: 'tools/helper/' does not have a commit checked out",
      commits: [],
    } as unknown as SessionResult;
    const problem = unpushedCheckpoint(result);
    expect(problem).toBe(
      `${CHECKPOINT_FAILED_REASON}: the last checkpoint could not be saved: git add: 'tools/helper/' does not have a commit checked out`,
    );
    const decision = decideAfterSession({
      outcome: 'completed',
      reason: 'end_turn',
      status: 'running',
      allFeaturesPass: true,
      featuresAfter: { passing: 3, total: 3 },
      workspaceProblem: problem,
    } as Parameters<typeof decideAfterSession>[0]);
    expect(decision).toEqual({
      kind: 'finish',
      cause: 'workspace',
      status: 'paused',
      reason: problem,
    });
  });

  it('a last checkpoint committed but not pushed pauses it with checkpoint_failed too', () => {
    const head = 'f6a7f318a5a6'.padEnd(40, '0');
    const refused = '/r refused the push of baton/x: [remote rejected] (pre-receive hook declined)';
    const result = {
      outcome: 'completed',
      commits: [head],
      checkpoint: { head, pushed: false, pushError: { code: 'push_failed', message: refused } },
    } as unknown as SessionResult;
    expect(unpushedCheckpoint(result)).toBe(
      `${CHECKPOINT_FAILED_REASON}: checkpoint f6a7f318a5a6 was not pushed: ${refused}`,
    );
    // A pushed one is no problem.
    const pushed = { ...result, checkpoint: { head, pushed: true } } as unknown as SessionResult;
    expect(unpushedCheckpoint(pushed)).toBeUndefined();
  });
});
