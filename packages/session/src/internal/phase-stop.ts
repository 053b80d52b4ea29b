import type { ContextFullCause, SessionOutcome } from '../types.js';
import type { WorkAbortCause } from './work-signal.js';

/** Budgets the loop checks after every working turn. */
type BudgetReason = 'max_turns' | 'max_input_tokens' | 'max_output_tokens' | 'max_usd';

/** Why a phase of the loop stopped. */
export type PhaseStop =
  | { kind: 'end_turn' }
  | { kind: 'budget'; reason: BudgetReason }
  | { kind: 'aborted' }
  | { kind: 'refusal' }
  | { kind: 'max_tokens' }
  /**
   * The context window filled at `turn`: Baton's count, a 400 "prompt is too long" or
   * `model_context_window_exceeded` (`cause`), with the tokens when known.
   */
  | {
      kind: 'context_window';
      turn: number;
      cause: ContextFullCause;
      promptTokens: number | null;
      contextWindow: number | null;
    }
  /** The API refused the key (401) or its access (403). */
  | { kind: 'auth'; error: unknown }
  /** The API does not know the model (404 not_found_error). */
  | { kind: 'model_not_found'; error: unknown }
  | { kind: 'api_error'; error: unknown };

/** What a stopped working phase means for the session. */
export interface StopVerdict {
  outcome: SessionOutcome;
  /** The result's machine `stopReason`. */
  stopReason: string;
  /** The result's readable reason. */
  reason: string;
  /** The reason given to the end-of-session turn; undefined: no end-of-session turn. */
  endReason?: string;
  /** The old conversation is full: the end-of-session turn starts from a fresh context. */
  freshEndContext?: boolean;
  /** The turn at which the context window filled (a `context_full` verdict). */
  contextFullAt?: number;
  error?: string;
}

/** What the verdicts need to know beyond the stop itself. */
export interface StopFacts {
  /** The model the requests named. */
  model: string;
  /** Why the working signal was aborted, if it was. */
  abortCause: WorkAbortCause | undefined;
  /** The remote's refusal, when a checkpoint push was rejected (`abortCause: 'push_rejected'`). */
  pushRejected?: string | undefined;
  /** Turns answered so far. */
  turns: number;
  /** `max_tokens` stops in a row that end a session. */
  maxConsecutiveMaxTokens: number;
}

const BUDGET_TEXT: Record<BudgetReason, string> = {
  max_turns: 'the turn budget',
  max_input_tokens: 'the input-token budget',
  max_output_tokens: 'the output-token budget',
  max_usd: 'the cost budget',
};

/** A message on one line (an API error body can hold newlines). */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * An API error as one readable line, `401 authentication_error: invalid x-api-key`, from the
 * error body the API sent (the SDK's own message is the status and the body's JSON); anything
 * else as its message on one line.
 */
function apiErrorLine(error: unknown): string {
  const body = (error as { error?: { error?: { type?: unknown; message?: unknown } } } | null)
    ?.error?.error;
  if (!(error instanceof Error) || typeof body?.message !== 'string') {
    return oneLine(errorMessage(error));
  }
  const status = (error as { status?: unknown }).status;
  const type = typeof body.type === 'string' ? `${body.type}: ` : '';
  return oneLine(`${typeof status === 'number' ? `${status} ` : ''}${type}${body.message}`);
}

type VerdictOf = {
  [K in PhaseStop['kind']]: (
    stop: Extract<PhaseStop, { kind: K }>,
    facts: StopFacts,
  ) => StopVerdict;
};

/** From how the working phase stopped to the session's outcome: one row per stop kind. */
const VERDICTS: VerdictOf = {
  end_turn: () => ({
    outcome: 'completed',
    stopReason: 'end_turn',
    reason: 'The agent finished its work for this session.',
    endReason: 'done',
  }),
  budget: (stop) => ({
    outcome: 'budget_exhausted',
    stopReason: stop.reason,
    reason: `Stopped at ${BUDGET_TEXT[stop.reason]}.`,
    endReason: stop.reason,
  }),
  aborted: (_stop, facts) =>
    facts.abortCause === 'push_rejected'
      ? {
          outcome: 'failed',
          stopReason: 'push_rejected',
          reason: `The checkpoint push was rejected: ${facts.pushRejected ?? 'not a fast-forward'}`,
          error: facts.pushRejected ?? 'push rejected',
        }
      : facts.abortCause === 'paused'
        ? {
            outcome: 'paused',
            stopReason: 'paused',
            reason: 'The operator paused the project.',
            ...(facts.turns > 0 ? { endReason: 'paused' } : {}),
          }
        : facts.abortCause === 'abandoned'
          ? {
              // Another worker may run the project now: nothing more is asked of the model.
              outcome: 'cancelled',
              stopReason: 'cancelled',
              reason:
                'The session stopped: it lost the project to another worker (lease or job lock lost).',
            }
          : facts.abortCause === 'wall_clock'
            ? {
                outcome: 'budget_exhausted',
                stopReason: 'wall_clock',
                reason: 'Stopped at the wall-clock budget.',
                endReason: 'wall_clock',
              }
            : {
                outcome: 'cancelled',
                stopReason: 'cancelled',
                reason: 'The session was cancelled.',
                ...(facts.turns > 0 ? { endReason: 'cancelled' } : {}),
              },
  refusal: () => ({
    outcome: 'refused',
    stopReason: 'refusal',
    reason: 'The model refused to continue (stop_reason refusal).',
  }),
  max_tokens: (_stop, facts) => ({
    outcome: 'failed',
    stopReason: 'max_tokens',
    reason: `The model hit max_tokens ${facts.maxConsecutiveMaxTokens} times in a row; raise maxTokens.`,
    endReason: 'max_tokens',
  }),
  // Running out of context is what a chain of sessions is for: never a failure. Baton's own
  // count hands off while the end-of-session turn still fits the conversation (it reserves room
  // for it), so the agent closes its log knowing what it did; after the API said the context is
  // full, the log is closed from a fresh context.
  context_window: (stop) => ({
    outcome: 'budget_exhausted',
    stopReason: 'context_full',
    reason: `The context window filled at turn ${stop.turn}; the work is checkpointed and the next session continues from the progress log.`,
    endReason: 'context_full',
    freshEndContext: stop.cause !== 'counter',
    contextFullAt: stop.turn,
  }),
  // No end-of-session turn: the API would refuse it too. Nothing is lost (checkpoint, memory).
  auth: (stop) => {
    const error = apiErrorLine(stop.error);
    return {
      outcome: 'failed',
      stopReason: 'auth',
      reason: `The API refused the API key: ${error}. Check ANTHROPIC_API_KEY (and its access to the model), then resume the project.`,
      error,
    };
  },
  model_not_found: (_stop, facts) => ({
    outcome: 'failed',
    stopReason: 'model_not_found',
    reason: `The API does not know the model "${facts.model}" (404 not_found_error); name a model the API serves.`,
    error: `unknown model "${facts.model}"`,
  }),
  api_error: (stop) => {
    const error = apiErrorLine(stop.error);
    return {
      outcome: 'failed',
      stopReason: 'api_error',
      reason: `The API call failed: ${error}`,
      error,
    };
  },
};

export function verdictFor(stop: PhaseStop, facts: StopFacts): StopVerdict {
  return (VERDICTS[stop.kind] as (stop: PhaseStop, facts: StopFacts) => StopVerdict)(stop, facts);
}

/** What an end-of-session phase that did not finish adds to the reason. */
export function endPhaseNote(stop: PhaseStop): string {
  if (stop.kind === 'aborted') return ' The end-of-session turn ran out of time.';
  if (stop.kind === 'api_error')
    return ` The end-of-session turn failed: ${errorMessage(stop.error)}`;
  if (stop.kind === 'refusal') return ' The model refused the end-of-session turn.';
  if (stop.kind === 'context_window')
    return ' The end-of-session turn did not fit the context window, even from a fresh context.';
  return '';
}
