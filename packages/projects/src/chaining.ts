import type { ProjectBudgets, ProjectCounters, ProjectStatus } from './project.js';

/** The status reason of a project an operator paused (budget pauses say `budget: ...`). */
export const OPERATOR_PAUSE_REASON = 'paused by operator';

/** Why a session job was queued (shown in events and logs). */
export type SessionJobReason = 'enqueue' | 'chain' | 'resume' | 'retry' | 'shutdown';

/** The two kinds of session a project chain runs (`end` is a phase inside a session). */
export type NextSessionKind = 'init' | 'resume';

/**
 * Which session runs next, from the checklist in memory (`readFeatures`: `null` when the file is
 * missing or not a valid checklist). Only a checklist with features gives `resume`: the resume
 * prompt works through the list, so without one it has nothing to do and every session would
 * count as failed; the init prompt writes the checklist, and the checklist rules let any valid
 * content replace a broken one. `baton run` and the worker both decide here.
 */
export function nextSessionKind(features: readonly unknown[] | null): NextSessionKind {
  return features !== null && features.length > 0 ? 'resume' : 'init';
}

/** Why the processor's AbortSignal fired, if it did. */
export type AbortReason = 'shutdown' | 'cancelled' | 'paused' | 'lease_lost' | 'lock_lost';

export interface ChainInput {
  /** Outcome from `runSession`. */
  outcome: string;
  /** Readable reason the session stopped. */
  reason: string;
  error?: string | undefined;
  /** The session's machine stop reason (`auth`, `context_full`, ...), when it gave one. */
  stopReason?: string | undefined;
  /** The context window filled (`SessionResult.contextFull`): at which turn, and whether anything useful was done before. */
  contextFull?: { turn: number; useful: boolean } | undefined;
  allFeaturesPass: boolean;
  featuresAfter: { passing: number; total: number };
  /**
   * Passing features whose check has not passed on the session's final commit
   * (`SessionResult.verification.pending`): while any is left the project does not complete.
   * Absent (verification off, or a session from before it): 0.
   */
  checksPending?: number | undefined;
  abortReason: AbortReason | undefined;
  /** Status read after the session ended (a user may have cancelled meanwhile). */
  status: ProjectStatus;
  /** Counters after this session was added. */
  counters: ProjectCounters;
  budgets: ProjectBudgets;
  lastError: string | null;
  /**
   * Set when the project's code could not reach its remote (the end-of-session checkpoint was
   * not pushed, or the branch could not be fetched before the session): the project pauses with
   * this reason, whatever else happened, until a user resumes it. Nothing is lost: the commits
   * stay in the worker's clone.
   */
  workspaceProblem?: string | undefined;
  chainDelayMs: number;
  retryDelayMs: number;
  maxConsecutiveFailures: number;
}

/**
 * Which rule of `decideAfterSession` decided, as a code: `baton run`'s exit code and the worker's
 * log read it from one table instead of parsing the reason.
 */
export type ChainCause =
  | 'lease_lost'
  | 'cancelled'
  | 'operator_pause'
  | 'not_runnable'
  | 'workspace'
  | 'completed'
  | 'failed'
  | 'refused'
  | 'budget'
  | 'no_progress'
  | 'auth'
  | 'model_not_found'
  | 'context_full'
  | 'retry'
  | 'shutdown'
  | 'chain';

export type ChainDecision =
  /** Someone else owns what happens next (lost lease or lock: the job is re-run elsewhere). */
  | { kind: 'abandon'; cause: 'lease_lost'; reason: string }
  /** The project stays as it is (cancelled by a user, paused by an operator, moved meanwhile). */
  | { kind: 'stop'; cause: 'cancelled' | 'operator_pause' | 'not_runnable'; reason: string }
  /** The project moves to a final or waiting status. */
  | {
      kind: 'finish';
      cause:
        | 'workspace'
        | 'completed'
        | 'failed'
        | 'refused'
        | 'budget'
        | 'no_progress'
        | 'auth'
        | 'model_not_found'
        | 'context_full';
      status: Extract<ProjectStatus, 'completed' | 'paused' | 'failed'>;
      reason: string;
      /** The pause is because a project budget was used up. */
      budgetReached?: true | undefined;
    }
  /** Another session is queued. */
  | {
      kind: 'next';
      cause: 'retry' | 'shutdown' | 'chain';
      delayMs: number;
      jobReason: SessionJobReason;
      reason: string;
    };

/** A session failed (API errors, internal errors, a refusal, or an init that left no checklist). */
export function isFailedSession(
  input: Pick<ChainInput, 'outcome' | 'featuresAfter' | 'abortReason'>,
) {
  if (input.abortReason !== undefined) return false;
  if (input.outcome === 'failed' || input.outcome === 'refused') return true;
  return input.featuresAfter.total === 0;
}

/** The machine-readable head of the status reason of a project paused because the API refused its key. */
export const AUTH_REASON = 'auth';

/**
 * The machine-readable head of the status reason of a project whose model the API does not know
 * (404 `not_found_error`): every session would fail the same way.
 */
export const MODEL_NOT_FOUND_REASON = 'model_not_found';

/** The machine-readable head of the status reason of a project whose sessions fill the context uselessly. */
export const CONTEXT_FULL_REASON = 'context_full';

/** Sessions in a row whose context filled before anything useful that pause the project. */
const MAX_USELESS_CONTEXT_FILLS = 2;

/**
 * What a finished session means for the `uselessContextFills` streak: its context filled before
 * it did anything useful (true), it ran and did not (false), or it was cut short by a shutdown or
 * a lost lease (undefined: the streak stays as it is).
 */
export function uselessContextFill(input: {
  contextFull?: ChainInput['contextFull'];
  abortReason?: AbortReason | undefined;
}): boolean | undefined {
  if (input.contextFull !== undefined) return !input.contextFull.useful;
  return input.abortReason === undefined ? false : undefined;
}

/**
 * A session whose context window filled before it did anything useful, right after a session
 * whose context did the same (`counters.uselessContextFills`, this session included, reached
 * `MAX_USELESS_CONTEXT_FILLS`): another one would do the same. The project pauses with what to
 * change. Sessions that merely made no progress, without filling their context, do not count
 * here (that is the no-progress rule).
 */
export function contextFullReason(input: {
  contextFull?: ChainInput['contextFull'];
  counters: Pick<ProjectCounters, 'uselessContextFills'>;
}): string | null {
  const full = input.contextFull;
  if (full === undefined || full.useful) return null;
  if (input.counters.uselessContextFills < MAX_USELESS_CONTEXT_FILLS) return null;
  return `${CONTEXT_FULL_REASON}: the context window filled at turn ${full.turn} before the session did anything useful, twice in a row; give the model more room (a model with a larger context window, or context editing with BATON_CONTEXT_* / --context), or split the features into smaller ones, then resume`;
}

/**
 * Why a project pauses after what the API answered a session, or null: a refused key (`auth`), a
 * model the API does not know (`model_not_found`), or a context that filled uselessly twice in a
 * row (`context_full`). `baton run` and the worker both stop here.
 */
export function apiPauseReason(input: {
  stopReason?: string | undefined;
  reason: string;
  contextFull?: ChainInput['contextFull'];
  counters: Pick<ProjectCounters, 'uselessContextFills'>;
}): string | null {
  if (input.stopReason === AUTH_REASON) return `${AUTH_REASON}: ${input.reason}`;
  if (input.stopReason === MODEL_NOT_FOUND_REASON) {
    return `${MODEL_NOT_FOUND_REASON}: ${input.reason}`;
  }
  return contextFullReason(input);
}

/** Resume sessions in a row without a newly passing feature before a project pauses. */
export const DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS = 3;

/**
 * The reason (prefix) a project is paused with when its session's last checkpoint could not be
 * committed or pushed: its work is not on the project branch, so it is never `completed` (a
 * `workspaceProblem`, decided before `completed` below).
 */
export const CHECKPOINT_FAILED_REASON = 'checkpoint_failed';

/** The machine-readable head of the status reason of a project paused for lack of progress. */
export const NO_PROGRESS_REASON = 'no_progress';

/**
 * What a finished session means for the no-progress streak: a newly passing feature resets it,
 * a resume session without one extends it, an init session (which flips nothing by design) and a
 * session cut short by a lost lease or a shutdown leave it as it is.
 */
export function sessionProgress(input: {
  kind: string;
  featuresBefore: { passing: number };
  featuresAfter: { passing: number };
  flippedFeatures: readonly string[];
  abortReason?: AbortReason | undefined;
}): 'progressed' | 'none' | 'neutral' {
  if (
    input.flippedFeatures.length > 0 ||
    input.featuresAfter.passing > input.featuresBefore.passing
  ) {
    return 'progressed';
  }
  if (input.kind === 'init' || input.abortReason !== undefined) return 'neutral';
  return 'none';
}

/**
 * `no_progress: ...` once the streak of sessions without a newly passing feature reached the
 * project's limit, else null. `baton run` and the worker both stop here.
 */
export function noProgressReason(
  budgets: Pick<ProjectBudgets, 'maxSessionsWithoutProgress'>,
  counters: Pick<ProjectCounters, 'sessionsWithoutProgress' | 'featuresPassing' | 'featuresTotal'>,
): string | null {
  const limit = budgets.maxSessionsWithoutProgress ?? DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS;
  if (counters.sessionsWithoutProgress < limit) return null;
  return `${NO_PROGRESS_REASON}: ${counters.sessionsWithoutProgress} sessions in a row without a newly passing feature (${counters.featuresPassing} of ${counters.featuresTotal} pass); look at the progress log, then resume`;
}

/** Which project budget, if any, is used up; the readable reason names it. */
export function exhaustedBudget(budgets: ProjectBudgets, counters: ProjectCounters): string | null {
  if (budgets.maxSessions !== undefined && counters.sessions >= budgets.maxSessions) {
    return `budget: ${counters.sessions} of ${budgets.maxSessions} sessions used`;
  }
  if (budgets.maxUsd !== undefined && counters.costUsd >= budgets.maxUsd) {
    return `budget: $${counters.costUsd.toFixed(4)} spent of $${budgets.maxUsd}`;
  }
  // Every input token counts: uncached, read from the prompt cache and written to it.
  const tokens =
    counters.inputTokens +
    counters.cacheReadInputTokens +
    counters.cacheCreationInputTokens +
    counters.outputTokens;
  if (budgets.maxTokens !== undefined && tokens >= budgets.maxTokens) {
    return `budget: ${tokens} tokens used of ${budgets.maxTokens}`;
  }
  return null;
}

/**
 * What happens after a session: the whole chaining policy in one pure function.
 * Order matters: a lost lease beats everything (another worker takes over), a user's cancel
 * beats the result, work that did not reach the remote beats completion (the branch must hold
 * it), all features passing beats budgets, a refused API key (`auth`), an unknown model
 * (`model_not_found`) and a context that fills uselessly twice in a row (`context_full`) pause
 * before failures are counted, and failures back
 * off exponentially. A context that filled after useful work is an ordinary session: the next
 * one continues.
 */
export function decideAfterSession(input: ChainInput): ChainDecision {
  if (input.abortReason === 'lease_lost' || input.abortReason === 'lock_lost') {
    return {
      kind: 'abandon',
      cause: 'lease_lost',
      reason: `session aborted: ${input.abortReason.replace('_', ' ')}`,
    };
  }
  if (input.status === 'cancelled' || input.abortReason === 'cancelled') {
    return { kind: 'stop', cause: 'cancelled', reason: 'cancelled' };
  }
  if (input.abortReason === 'paused' || input.status === 'paused') {
    // The pause already moved the status; the project waits for `resume`.
    return { kind: 'stop', cause: 'operator_pause', reason: OPERATOR_PAUSE_REASON };
  }
  if (input.status !== 'running' && input.status !== 'queued') {
    return { kind: 'stop', cause: 'not_runnable', reason: `project is ${input.status}` };
  }
  if (input.workspaceProblem !== undefined) {
    return {
      kind: 'finish',
      cause: 'workspace',
      status: 'paused',
      reason: input.workspaceProblem,
    };
  }
  const { passing, total } = input.featuresAfter;
  if (input.allFeaturesPass || (total > 0 && passing === total)) {
    // Complete only on checks that passed on the final commit: a re-run cut short leaves some.
    const pending = input.checksPending ?? 0;
    if (pending === 0) {
      return {
        kind: 'finish',
        cause: 'completed',
        status: 'completed',
        reason: `all ${total} features pass`,
      };
    }
    return {
      kind: 'next',
      cause: 'chain',
      delayMs: input.chainDelayMs,
      jobReason: 'chain',
      reason: `all ${total} features pass; ${pending} check${pending === 1 ? '' : 's'} still to re-run on the final commit`,
    };
  }
  // A refused key or an unknown model fails every session the same way, and so does a context
  // that fills before anything is done: wait for the user, burn nothing.
  const apiPause = apiPauseReason(input);
  if (apiPause) {
    const cause =
      input.stopReason === AUTH_REASON
        ? 'auth'
        : input.stopReason === MODEL_NOT_FOUND_REASON
          ? 'model_not_found'
          : 'context_full';
    return { kind: 'finish', cause, status: 'paused', reason: apiPause };
  }
  if (isFailedSession(input)) {
    const failures = input.counters.consecutiveFailures;
    const detail = input.error ?? input.reason;
    if (failures >= input.maxConsecutiveFailures) {
      return {
        kind: 'finish',
        cause: input.outcome === 'refused' ? 'refused' : 'failed',
        status: 'failed',
        reason: `${failures} failed sessions in a row; last error: ${detail}`,
      };
    }
    const budget = exhaustedBudget(input.budgets, input.counters);
    if (budget) return budgetPause(budget);
    return {
      kind: 'next',
      cause: 'retry',
      delayMs: input.retryDelayMs * 2 ** Math.max(0, failures - 1),
      jobReason: 'retry',
      reason: `retrying after a failed session (${failures} of ${input.maxConsecutiveFailures}): ${detail}`,
    };
  }
  const budget = exhaustedBudget(input.budgets, input.counters);
  if (budget) return budgetPause(budget);
  const stalled = noProgressReason(input.budgets, input.counters);
  if (stalled) return { kind: 'finish', cause: 'no_progress', status: 'paused', reason: stalled };
  if (input.abortReason === 'shutdown') {
    return {
      kind: 'next',
      cause: 'shutdown',
      delayMs: 0,
      jobReason: 'shutdown',
      reason: 'worker shut down; continuing elsewhere',
    };
  }
  return {
    kind: 'next',
    cause: 'chain',
    delayMs: input.chainDelayMs,
    jobReason: 'chain',
    reason: `${total - passing} of ${total} features still failing`,
  };
}

function budgetPause(reason: string): ChainDecision {
  return { kind: 'finish', cause: 'budget', status: 'paused', reason, budgetReached: true };
}
