import type { ChainCause, ChainDecision, ProjectStatus } from '@baton/projects';
import { EXIT_CODES } from '../exit-codes.js';

/**
 * `baton run`'s exit code for what the chain decided last, one row per rule of
 * `decideAfterSession` (`next` rows: the `--sessions` limit was reached first).
 */
const EXIT_CODE_BY_CAUSE: Record<ChainCause, number> = {
  completed: EXIT_CODES.ok,
  budget: EXIT_CODES.budgetExhausted,
  no_progress: EXIT_CODES.noProgress,
  // The key was refused: no session can run until the user fixes it.
  auth: EXIT_CODES.sessionFailed,
  // The API does not know the model: no session can run until the user names another.
  model_not_found: EXIT_CODES.sessionFailed,
  context_full: EXIT_CODES.noProgress,
  failed: EXIT_CODES.sessionFailed,
  refused: EXIT_CODES.refused,
  cancelled: EXIT_CODES.cancelled,
  // The remote could not take the work: nothing is lost, the next run pushes it first.
  workspace: EXIT_CODES.featuresRemaining,
  operator_pause: EXIT_CODES.featuresRemaining,
  not_runnable: EXIT_CODES.featuresRemaining,
  lease_lost: EXIT_CODES.sessionFailed,
  chain: EXIT_CODES.featuresRemaining,
  retry: EXIT_CODES.featuresRemaining,
  shutdown: EXIT_CODES.featuresRemaining,
};

/**
 * How `baton run` exits after its loop: 130 when the user stopped or cancelled it, 0 when the project is
 * complete, else the row of the chain's last decision (3 when no session ran or the `--sessions`
 * limit came first).
 */
export function runExitCode(end: {
  aborted: boolean;
  status: ProjectStatus;
  decision: ChainDecision | undefined;
}): number {
  // Ctrl-C, or a cancel (`baton cancel --local`) seen while a session ran or before the next.
  if (end.aborted || end.status === 'cancelled') return EXIT_CODES.cancelled;
  if (end.status === 'completed') return EXIT_CODES.ok;
  return end.decision === undefined
    ? EXIT_CODES.featuresRemaining
    : EXIT_CODE_BY_CAUSE[end.decision.cause];
}
