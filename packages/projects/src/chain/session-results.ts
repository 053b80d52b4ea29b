import { emptyUsageTotals } from '@baton/context-config';
import {
  countFeatures,
  type RunSessionOptions,
  type SessionResult,
  type readFeatures,
} from '@baton/session';
import { isFailedSession, type AbortReason } from '../chaining.js';
import { describeError } from '../errors.js';
import type { ProjectRecord, SessionBudgetsInput } from '../project.js';
import type { SessionCheckpointSummary, SessionSummary } from '../project-log.js';

/**
 * Runs one session. The chain takes any function of this shape (tests and benchmarks inject
 * their own); the default is `runSession` from `@baton/session`.
 */
export type SessionRunner = (options: RunSessionOptions) => Promise<SessionResult>;

/** A runner that throws still produces a result, so the project's record stays truthful. */
export async function runGuarded(
  runSession: SessionRunner,
  sessionOptions: RunSessionOptions,
): Promise<SessionResult> {
  const startedAt = Date.now();
  try {
    return await runSession(sessionOptions);
  } catch (error) {
    const none = { passing: 0, total: 0 };
    return {
      sessionId: sessionOptions.sessionId ?? '',
      kind: sessionOptions.kind,
      outcome: 'failed',
      reason: `session crashed: ${describeError(error)}`,
      stopReason: 'internal_error',
      commits: [],
      progressEntry: 'none',
      turns: 0,
      usage: emptyUsageTotals(),
      featuresBefore: none,
      featuresAfter: none,
      allFeaturesPass: false,
      flippedFeatures: [],
      startedAt,
      endedAt: Date.now(),
      error: describeError(error),
    };
  }
}

/** The result of a session that never started because its workspace could not be prepared. */
export function notStarted(
  sessionId: string,
  kind: SessionResult['kind'],
  features: Awaited<ReturnType<typeof readFeatures>>,
  error: string,
): SessionResult {
  const counts = countFeatures(features);
  const now = Date.now();
  return {
    sessionId,
    kind,
    outcome: 'failed',
    reason: error,
    stopReason: 'workspace_unavailable',
    commits: [],
    progressEntry: 'none',
    turns: 0,
    usage: emptyUsageTotals(),
    featuresBefore: counts,
    featuresAfter: counts,
    allFeaturesPass: false,
    flippedFeatures: [],
    startedAt: now,
    endedAt: now,
    error,
  };
}

/** Who ran a session, where, and how it began: the parts of its summary the result lacks. */
export interface SessionIdentity {
  sessionId: string;
  sessionNumber: number;
  kind: SessionResult['kind'];
  interrupted: boolean;
  jobId: string;
  workerId: string;
  /** The model the session started on. */
  model: string;
}

/**
 * The summary recorded on the project for a finished session, and whether it counts as a
 * failure (a session stopped on purpose never does).
 */
export function summarizeSession(
  identity: SessionIdentity,
  result: SessionResult,
  abortReason: AbortReason | undefined,
): { summary: SessionSummary; failed: boolean } {
  const failed = isFailedSession({
    outcome: result.outcome,
    featuresAfter: result.featuresAfter,
    abortReason,
  });
  const summary: SessionSummary = {
    sessionId: identity.sessionId,
    sessionNumber: identity.sessionNumber,
    kind: identity.kind,
    outcome: result.outcome,
    reason: result.reason,
    interrupted: identity.interrupted,
    turns: result.turns,
    inputTokens: result.usage.inputTokens,
    cacheReadInputTokens: result.usage.cacheReadInputTokens,
    cacheCreationInputTokens: result.usage.cacheCreationInputTokens,
    outputTokens: result.usage.outputTokens,
    clearedInputTokens: result.usage.clearedInputTokens,
    costUsd: result.usage.costUsd,
    featuresBefore: result.featuresBefore,
    featuresAfter: result.featuresAfter,
    flippedFeatures: result.flippedFeatures,
    startedAt: result.startedAt,
    endedAt: result.endedAt,
    jobId: identity.jobId,
    workerId: identity.workerId,
    error: result.error,
    commits: result.commits,
    model: identity.model,
    fallback: result.fallback,
    verification: result.verification,
    mcp: result.mcp?.map((status) => ({
      server: status.server,
      state: status.state,
      tools: status.tools.length,
      message: status.message,
    })),
    checkpoint: result.checkpoint === undefined ? undefined : checkpointSummary(result.checkpoint),
    checkpointError: result.checkpointError,
    // Not a pass-through: a count of 0 is left out as well.
    ...(result.checkpointFailures === undefined || result.checkpointFailures === 0
      ? {}
      : { checkpointFailures: result.checkpointFailures }),
  };
  if (failed && summary.error === undefined && result.featuresAfter.total === 0) {
    summary.error = 'the session ended without a feature checklist in memory';
  }
  return { summary, failed };
}

/** Session budgets: the project's per-session limits, capped by what is left of its USD budget. */
export function sessionBudgets(project: ProjectRecord): SessionBudgetsInput {
  const budgets: SessionBudgetsInput = { ...(project.budgets.session ?? {}) };
  if (project.budgets.maxUsd !== undefined) {
    const left = Math.max(0, project.budgets.maxUsd - project.counters.costUsd);
    budgets.maxUsd = budgets.maxUsd === undefined ? left : Math.min(budgets.maxUsd, left);
  }
  return budgets;
}

/** The project's fallback model, else the worker's (`BATON_FALLBACK_MODEL`). */
export function fallbackModelOption(
  project: ProjectRecord,
  workerDefault: string | undefined,
): { fallbackModel?: string } {
  const fallbackModel = project.fallbackModel ?? workerDefault;
  // Spread over the request's own options (chainSessionOptions): none keeps theirs.
  return fallbackModel === undefined ? {} : { fallbackModel };
}

function checkpointSummary(
  checkpoint: NonNullable<SessionResult['checkpoint']>,
): SessionCheckpointSummary {
  return {
    head: checkpoint.head,
    pushed: checkpoint.pushed,
    hooks: checkpoint.hooks,
    skipped: checkpoint.skipped,
    // Not pass-throughs: empty lists are left out as well.
    ...(checkpoint.tooLarge === undefined || checkpoint.tooLarge.length === 0
      ? {}
      : { tooLarge: checkpoint.tooLarge }),
    ...(checkpoint.special === undefined || checkpoint.special.length === 0
      ? {}
      : { special: checkpoint.special }),
    error: checkpoint.pushError?.message,
  };
}
