import type { SessionResult } from '@baton/session';
import type { ChainDecision, decideAfterSession } from '../chaining.js';
import {
  RUNNABLE_STATUSES,
  type ProjectBudgets,
  type ProjectRecord,
  type ProjectStatus,
} from '../project.js';
import type { ProjectLog, SessionSummary } from '../project-log.js';
import type { ChainedSessionRequest, SessionChainOptions } from './chain-types.js';

/** What `decideAfterSession` is asked about one session, before a workspace problem is added. */
export function decisionInput(
  result: SessionResult,
  project: ProjectRecord,
  summary: SessionSummary | undefined,
  context: {
    options: SessionChainOptions;
    request: ChainedSessionRequest;
    /** The budgets the rules check: the project's stored ones (`baton run` and workers alike). */
    budgets: ProjectBudgets;
  },
): Parameters<typeof decideAfterSession>[0] {
  const { options, request, budgets } = context;
  return {
    outcome: result.outcome,
    reason: result.reason,
    error: summary?.error,
    stopReason: result.stopReason,
    contextFull: result.contextFull,
    allFeaturesPass: result.allFeaturesPass,
    checksPending: result.verification?.pending,
    featuresAfter: result.featuresAfter,
    abortReason: request.control.abortReason,
    status: project.status,
    counters: project.counters,
    budgets,
    lastError: project.lastError,
    chainDelayMs: options.chainDelayMs,
    retryDelayMs: options.retryDelayMs,
    maxConsecutiveFailures: options.maxConsecutiveFailures,
  };
}

/** Moves the project as decided (and queues the next session); returns its status. */
export async function carryOutDecision(
  log: ProjectLog,
  request: ChainedSessionRequest,
  decision: ChainDecision,
  after: ProjectRecord,
): Promise<ProjectStatus | null> {
  const { projectId } = request;
  if (decision.kind === 'finish') {
    const moved = await log.transition(projectId, decision.status, {
      from: RUNNABLE_STATUSES,
      reason: decision.reason,
      budgetReached: decision.budgetReached,
    });
    return moved.ok ? decision.status : moved.current;
  }
  if (decision.kind === 'next') {
    // Queued before the caller lets go of the project, so a crash right here cannot lose the
    // chain; a next job waits for the lease if it starts first.
    const moved = await log.transition(projectId, 'queued', {
      from: RUNNABLE_STATUSES,
      reason: decision.reason,
    });
    if (moved.ok) {
      await request.queueNext?.({
        sessionNumber: after.counters.sessions + 1,
        delayMs: decision.delayMs,
        reason: decision.jobReason,
      });
    }
    return moved.ok ? 'queued' : moved.current;
  }
  return after.status;
}
