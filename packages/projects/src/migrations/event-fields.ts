/**
 * The run-once upgrade of project events written before a field of a turn, a session start, a
 * session result or a check's evidence existed (Redis migration `2026-12-04-event-fields`,
 * `BATON_HOME` migration `2026-12-04-local-event-fields`). Each missing field gets what the
 * decoder used to read its absence as, so nothing a reader shows changes; the fields the decoder
 * left absent get the value recorded in docs/decisions/2026-12-04-event-field-migrations.md. Entry
 * ids are kept: a Redis stream is copied with its ids and renamed over the original, an events
 * file keeps one line per event (its ids are line numbers).
 */
import {
  isObject,
  rewriteFileEvents,
  rewriteRedisEvents,
  withDefaults,
  type EventUpgrade,
  type StoredEvent as Stored,
} from './event-rewrite.js';
import type { MigrationContext } from './redis-migrations.js';

/** The model of a turn whose session's start event and project named none. */
const UNRECORDED_MODEL = 'unrecorded';

/**
 * The `sandbox` of a session start recorded before commands ran in the sandbox: they ran on the
 * host, which is what `mode: 'off'` says everywhere it shows.
 */
export const PRE_SANDBOX = {
  mode: 'off',
  notice: 'recorded before Baton ran commands in a sandbox: they ran on the host',
} as const;

/** The session totals fields the decoder knows; absent ones read as 0. */
const TOTALS = {
  turns: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheWrite5mInputTokens: 0,
  cacheWrite1hInputTokens: 0,
  clearedInputTokens: 0,
  clearedToolUses: 0,
  clearedThinkingTurns: 0,
  cacheInvalidatedInputTokens: 0,
  costUsd: 0,
};

const EVIDENCE = {
  exitCode: null,
  durationMs: 0,
  outputTail: '',
  commit: null,
  at: 0,
  sessionId: '',
};

const VERIFICATION = {
  verified: 0,
  claimed: 0,
  regressed: 0,
  unverified: 0,
  pending: 0,
  regressedIds: [],
  rerun: 0,
  rerunMs: 0,
};

function totals(value: unknown): unknown {
  return withDefaults(value === undefined ? {} : value, TOTALS);
}

/** Turns written without the TTL breakdown count every cache write as 5-minute. */
function turnUsage(value: unknown): unknown {
  if (!isObject(value)) return value;
  const usage = withDefaults(value, {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  }) as Stored;
  const written = usage.cacheCreationInputTokens;
  if (typeof usage.cacheWrite5mInputTokens !== 'number') {
    usage.cacheWrite5mInputTokens = typeof written === 'number' ? written : 0;
  }
  if (typeof usage.cacheWrite1hInputTokens !== 'number') usage.cacheWrite1hInputTokens = 0;
  return usage;
}

function sessionResult(value: unknown): unknown {
  if (!isObject(value)) return value;
  const result = withDefaults(value, {
    reason: '',
    turns: 0,
    allFeaturesPass: false,
    flippedFeatures: [],
    startedAt: 0,
    endedAt: 0,
    commits: [],
    progressEntry: 'none',
  }) as Stored;
  result.usage = totals(result.usage);
  for (const side of ['featuresBefore', 'featuresAfter']) {
    result[side] = withDefaults(result[side] === undefined ? {} : result[side], {
      passing: 0,
      total: 0,
    });
  }
  if (isObject(result.checks)) {
    result.checks = Object.fromEntries(
      Object.entries(result.checks).map(([feature, state]) => [
        feature,
        isObject(state)
          ? {
              ...state,
              evidence: state.evidence == null ? null : withDefaults(state.evidence, EVIDENCE),
            }
          : state,
      ]),
    );
  }
  if (result.verification !== undefined) {
    result.verification = withDefaults(result.verification, VERIFICATION);
  }
  return result;
}

/** Who a project's sessions ran as, for turns written before they named their model. */
interface EventModels {
  /** Session id -> the model its `session-start` named (filled while events are read in order). */
  sessions: Map<string, string>;
  /** The project's configured model; null: the worker's default, which nothing recorded. */
  project: string | null;
}

/**
 * The upgrade of one project's events (configured model `project`). Call it on the events in
 * order: a `session-start` it sees names the model of its session's later turns.
 */
function eventFieldsUpgrade(project: string | null): EventUpgrade {
  const models: EventModels = { sessions: new Map(), project };
  return (event) => {
    if (event.type === 'session-start' && typeof event.sessionId === 'string') {
      if (typeof event.model === 'string') models.sessions.set(event.sessionId, event.model);
    }
    return upgradedFields(event, models);
  };
}

function upgradedFields(event: Stored, models: EventModels): Stored | null {
  switch (event.type) {
    case 'session-start':
      return event.sandbox === undefined ? { ...event, sandbox: { ...PRE_SANDBOX } } : event;
    case 'turn': {
      // Before fallback models a session ran on the model its start named.
      const model =
        typeof event.model === 'string'
          ? event.model
          : (models.sessions.get(String(event.sessionId)) ?? models.project ?? UNRECORDED_MODEL);
      const turn = withDefaults(event, {
        phase: 'work',
        durationMs: 0,
        appliedEdits: [],
        clearedInputTokens: 0,
        cacheInvalidation: null,
        costUsd: 0,
      }) as Stored;
      turn.model = model;
      // Before traces the response's model was not kept: the one the request named.
      if (typeof turn.responseModel !== 'string') turn.responseModel = model;
      turn.usage = turnUsage(turn.usage);
      if (isObject(turn.cacheInvalidation)) {
        turn.cacheInvalidation = withDefaults(turn.cacheInvalidation, {
          rewrittenInputTokens: 0,
          costUsd: 0,
        });
      }
      turn.totals = totals(turn.totals);
      return turn;
    }
    case 'check-passed':
    case 'check-failed':
    case 'feature-regressed':
      return { ...event, evidence: withDefaults(event.evidence, EVIDENCE) };
    case 'session-end':
      return { ...event, result: sessionResult(event.result) };
    default:
      return null;
  }
}

/** The Redis migration: each project's event stream that holds an event of an earlier shape. */
export function completeRedisEvents(context: MigrationContext, ids: readonly string[]) {
  return rewriteRedisEvents(context, ids, eventFieldsUpgrade);
}

/** The `BATON_HOME` migration: each project's `events.jsonl` holding an event of an earlier shape. */
export function completeFileEvents(home: string): Promise<void> {
  return rewriteFileEvents(home, eventFieldsUpgrade);
}
