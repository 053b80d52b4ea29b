import { CHECKPOINT_FAILED_REASON, decideAfterSession } from '@baton/projects';
import { describe, expect, it } from 'vitest';
import type { WorkerSessionResult } from '../src/session-runner.js';
import { unpushedCheckpoint } from '../src/session-workspace.js';

describe('a session whose last checkpoint could not be committed', () => {
  it('pauses the project with checkpoint_failed and the error, even with every feature passing', () => {
    const result = {
      outcome: 'completed',
      checkpointError: "git add: 'tools/helper/' does not have a commit checked out",
      commits: [],
    } as unknown as WorkerSessionResult;
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
    expect(decision).toEqual({ kind: 'finish', status: 'paused', reason: problem });
  });
});
