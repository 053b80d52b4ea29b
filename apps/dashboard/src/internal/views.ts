/**
 * The JSON shapes the dashboard's API returns, computed from control-API records. Kept separate
 * from the records so the UI never depends on how the worker stores things.
 */
import {
  type ContextConfigInput,
  cacheHitRate,
  defineContextConfig,
  summarizeContextConfig,
  totalInputTokens,
} from '@baton/context-config';
import { summarizeSandbox } from '@baton/workspace';
import { CHECKPOINT_FAILED_REASON } from '@baton/projects';
import type { EventEntry, FeatureFlip, ProjectEvent, ProjectRecord } from '../control.js';

/** What the hub learned from a project's recent events (for "current turn" and "last activity"). */
export interface ProjectActivity {
  sessionId: string | null;
  sessionNumber: number | null;
  turn: number | null;
  lastEventAt: number;
  lastEventType: string;
}

/**
 * Characters of a goal that list rows and stream messages carry: a goal can be 100,000
 * characters, and 500 rows of whole goals made one answer 50 MB. The whole goal is only on the
 * project's own endpoint (`GET /api/projects/:id`).
 */
const GOAL_EXCERPT_CHARACTERS = 300;

export interface ProjectView {
  id: string;
  /** The goal, cut to `GOAL_EXCERPT_CHARACTERS` except on the project's own endpoint. */
  goal: string;
  /** Whether `goal` is cut. */
  goalTruncated: boolean;
  /** The whole goal's length in characters. */
  goalLength: number;
  status: string;
  statusReason: string | null;
  statusAt: number;
  createdAt: number;
  model: string | null;
  /** The project's fallback model; `null`: the worker's `BATON_FALLBACK_MODEL`. */
  fallbackModel: string | null;
  contextPreset: string;
  /**
   * The context config every session resolves (stored at creation) and its one-line summary:
   * preset, edits, prompt caching and its TTL (`summarizeContextConfig`).
   */
  context: { config: ContextConfigInput; summary: string };
  /** The working tree on each worker; `null`: each worker's `<BATON_HOME>/workspaces/<id>`. */
  workspace: string | null;
  /** The repository the branch is pushed to; `null`: a bare repository Baton owns. */
  repo: string | null;
  base: string | null;
  baseCommit: string | null;
  branch: string;
  /** The last checkpoint the remote acknowledged. */
  lastCheckpoint: string | null;
  skipHooks: boolean;
  /**
   * Set while the project is paused because its last checkpoint could not be committed or pushed
   * (`checkpoint_failed`): its latest work is not on the branch. `reason` is the whole status
   * reason (what git or the remote refused, cleaned); `lastGood` the last checkpoint the remote
   * has (`null`: none yet).
   */
  checkpointFailure: { reason: string; lastGood: string | null } | null;
  features: { passing: number; total: number };
  sessions: number;
  currentSession: {
    sessionId: string;
    number: number;
    turn: number | null;
    startedAt: number;
  } | null;
  lastActivityAt: number;
  /**
   * `input` is every input token (uncached + read from the prompt cache + written to it);
   * `cacheHitRate` is `cacheRead / input` (0 with no input).
   */
  tokens: {
    input: number;
    uncached: number;
    cacheRead: number;
    cacheWrite: number;
    cacheHitRate: number;
    output: number;
    cleared: number;
  };
  costUsd: number;
  lastError: string | null;
  /** Where the latest session's commands ran, as one line; `off` is shown as a warning. */
  sandbox: { mode: 'bubblewrap' | 'off' | null; summary: string; allowedHosts: string[] };
  /**
   * The project's own MCP servers by name and kind. Never their commands, arguments, `env` or
   * headers: those hold `${VAR}` references to the worker's secrets.
   */
  mcpServers: Array<{ name: string; type: 'stdio' | 'http' }>;
}

export function projectView(
  project: ProjectRecord,
  activity: ProjectActivity | undefined,
  /** `whole`: the project's own endpoint; everything else carries an excerpt. */
  goal: 'excerpt' | 'whole' = 'excerpt',
): ProjectView {
  const active = project.activeSession;
  const goalTruncated = goal === 'excerpt' && project.goal.length > GOAL_EXCERPT_CHARACTERS;
  const turn =
    active !== null && activity !== undefined && activity.sessionId === active.sessionId
      ? activity.turn
      : null;
  const lastActivityAt = Math.max(
    project.statusAt,
    project.createdAt,
    active?.startedAt ?? 0,
    activity?.lastEventAt ?? 0,
  );
  const counters = project.counters;
  return {
    id: project.id,
    goal: goalTruncated ? project.goal.slice(0, GOAL_EXCERPT_CHARACTERS) : project.goal,
    goalTruncated,
    goalLength: project.goal.length,
    status: project.status,
    statusReason: project.statusReason,
    statusAt: project.statusAt,
    createdAt: project.createdAt,
    model: project.model,
    fallbackModel: project.fallbackModel,
    contextPreset: project.contextPreset,
    context: {
      config: project.context,
      summary: summarizeContextConfig(defineContextConfig(project.context)),
    },
    workspace: project.workspace,
    repo: project.repo,
    base: project.base,
    baseCommit: project.baseCommit,
    branch: project.branch,
    lastCheckpoint: project.lastCheckpoint,
    skipHooks: project.skipHooks,
    checkpointFailure:
      project.status === 'paused' &&
      project.statusReason?.startsWith(`${CHECKPOINT_FAILED_REASON}:`) === true
        ? { reason: project.statusReason, lastGood: project.lastCheckpoint }
        : null,
    features: { passing: counters.featuresPassing, total: counters.featuresTotal },
    sessions: Math.max(counters.sessions, counters.sessionsStarted),
    currentSession:
      active === null
        ? null
        : {
            sessionId: active.sessionId,
            number: active.sessionNumber,
            turn,
            startedAt: active.startedAt,
          },
    lastActivityAt,
    tokens: {
      input: totalInputTokens(counters),
      uncached: counters.inputTokens,
      cacheRead: counters.cacheReadInputTokens,
      cacheWrite: counters.cacheCreationInputTokens,
      cacheHitRate: cacheHitRate(counters),
      output: counters.outputTokens,
      cleared: counters.clearedInputTokens,
    },
    costUsd: counters.costUsd,
    lastError: project.lastError,
    sandbox: {
      mode: project.sessionSandbox?.mode ?? null,
      summary:
        project.sessionSandbox === null
          ? 'no session yet'
          : summarizeSandbox(project.sessionSandbox),
      allowedHosts: project.sandbox?.allowedHosts ?? [],
    },
    mcpServers: Object.entries(project.mcp?.mcpServers ?? {}).map(([name, server]) => ({
      name,
      type: server.type ?? 'stdio',
    })),
  };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Folds one event into a project's activity. */
export function updateActivity(
  previous: ProjectActivity | undefined,
  event: ProjectEvent,
): ProjectActivity {
  const next: ProjectActivity = previous
    ? { ...previous }
    : { sessionId: null, sessionNumber: null, turn: null, lastEventAt: 0, lastEventType: '' };
  next.lastEventAt = Math.max(next.lastEventAt, event.at);
  next.lastEventType = event.type;
  if (event.type === 'session-start') {
    next.sessionId = event.sessionId;
    next.sessionNumber = event.sessionNumber;
    next.turn = 0;
  } else if (event.type === 'turn' || event.type === 'tool-call') {
    if (next.sessionId !== event.sessionId) {
      next.sessionId = event.sessionId;
      next.turn = null;
    }
    next.turn = Math.max(next.turn ?? 0, event.turn);
  }
  return next;
}

export interface TurnPoint {
  sessionId: string;
  sessionNumber: number | null;
  turn: number;
  at: number;
  /** Every input token of this turn (after any clearing): uncached + cache read + cache write. */
  inputTokens: number;
  /** The API's `input_tokens`: neither read from nor written to the prompt cache. */
  uncachedInputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  outputTokens: number;
  /** Input tokens context editing removed before this turn. */
  clearedInputTokens: number;
  /** Names of the context edits applied on this turn. */
  edits: string[];
}

/** Input tokens per turn, from `turn` events, with the turns where context edits cleared. */
export function tokenSeries(entries: readonly EventEntry[]): TurnPoint[] {
  const sessionNumbers = new Map<string, number>();
  const points: TurnPoint[] = [];
  for (const { event } of entries) {
    if (event.type === 'session-start') {
      sessionNumbers.set(event.sessionId, event.sessionNumber);
      continue;
    }
    if (event.type !== 'turn') continue;
    const { usage } = event;
    const uncached = usage.inputTokens;
    const cacheRead = usage.cacheReadInputTokens;
    const cacheWrite = usage.cacheCreationInputTokens;
    points.push({
      sessionId: event.sessionId,
      sessionNumber: sessionNumbers.get(event.sessionId) ?? null,
      turn: event.turn,
      at: event.at,
      inputTokens: uncached + cacheRead + cacheWrite,
      uncachedInputTokens: uncached,
      cacheReadInputTokens: cacheRead,
      cacheCreationInputTokens: cacheWrite,
      outputTokens: usage.outputTokens,
      clearedInputTokens: event.clearedInputTokens,
      edits: event.appliedEdits.map((edit) => edit.type),
    });
  }
  return points;
}

interface ChecklistRow {
  id: string;
  description: string;
  steps: string[];
  passes: boolean;
  /** The session number whose summary lists this feature as flipped to passing (latest wins). */
  flippedInSession: number | null;
  flippedInSessionId: string | null;
}

export interface ChecklistView {
  /** `missing` before the init session wrote features.json; `invalid` if it does not parse. */
  state: 'ok' | 'missing' | 'invalid';
  rows: ChecklistRow[];
  passing: number;
  total: number;
}

/** The feature checklist from `features.json`, joined with the session that last flipped each feature. */
export function checklistView(
  content: string | null,
  flips: ReadonlyMap<string, FeatureFlip>,
): ChecklistView {
  if (content === null) return { state: 'missing', rows: [], passing: 0, total: 0 };
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return { state: 'invalid', rows: [], passing: 0, total: 0 };
  }
  if (!Array.isArray(parsed)) return { state: 'invalid', rows: [], passing: 0, total: 0 };
  const rows: ChecklistRow[] = [];
  for (const item of parsed) {
    const fields = record(item);
    if (fields === undefined) continue;
    const id = typeof fields.id === 'string' ? fields.id : String(rows.length + 1);
    const passes = fields.passes === true;
    const session = passes ? flips.get(id) : undefined;
    rows.push({
      id,
      description: typeof fields.description === 'string' ? fields.description : '',
      steps: Array.isArray(fields.steps)
        ? fields.steps.filter((step): step is string => typeof step === 'string')
        : [],
      passes,
      flippedInSession: session?.sessionNumber ?? null,
      flippedInSessionId: session?.sessionId ?? null,
    });
  }
  return {
    state: 'ok',
    rows,
    passing: rows.filter((row) => row.passes).length,
    total: rows.length,
  };
}

/** Compares Redis stream ids (`<ms>-<seq>`). */
export function compareStreamIds(left: string, right: string): number {
  const [leftMs = '0', leftSeq = '0'] = left.split('-');
  const [rightMs = '0', rightSeq = '0'] = right.split('-');
  const ms = Number(leftMs) - Number(rightMs);
  if (ms !== 0) return ms < 0 ? -1 : 1;
  const seq = Number(leftSeq) - Number(rightSeq);
  return seq === 0 ? 0 : seq < 0 ? -1 : 1;
}
