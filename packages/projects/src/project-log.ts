import type { FeatureChecks, SessionVerification } from '@baton/session';
import type { SandboxDescription } from '@baton/workspace/policy';
import type { EventEntry, WorkerEvent } from './events.js';
import type {
  ActiveSessionInfo,
  ProjectRecord,
  ProjectStatus,
  StatusTransition,
} from './project.js';

/**
 * The contract between the session chain and where projects are kept: read a project, record a
 * session's start and end, append events, move the status. Two adapters implement it, each in
 * its own file: `ProjectRepository` (Redis, used by workers, the dashboard and the CLI's Redis
 * verbs) and `FileProjectLog` (files under `BATON_HOME`, used by `baton run` and `--local`). Both
 * pass one behavioural suite (`describeProjectLogConformance` from `@baton/projects/testing`): an
 * adapter is done when the suite passes.
 */
export interface ProjectLog {
  /** Stores a new project in status `queued`; throws `ProjectError('conflict')` if the id is taken. */
  create(record: NewProjectRecord): Promise<ProjectRecord>;
  /** The project, or `null` when there is none with this id. */
  get(projectId: string): Promise<ProjectRecord | null>;
  /** The project, or `ProjectError('not_found')`. */
  require(projectId: string): Promise<ProjectRecord>;
  /**
   * Moves the project to `to` if its status is in `from` (any status when omitted), records the
   * timestamped transition and appends a `project-status` event. Never partly applied.
   */
  transition(
    projectId: string,
    to: ProjectStatus,
    options?: TransitionOptions,
  ): Promise<TransitionResult>;
  /** The status changes of the project, oldest first. */
  transitions(projectId: string): Promise<StatusTransition[]>;
  /**
   * Records the session now holding the project (`activeSession`, `sessionsStarted`), counts an
   * interruption when the previous one never ended, and notes where its commands run.
   */
  markSessionStart(
    projectId: string,
    active: ActiveSessionInfo,
    interrupted: boolean,
    sandbox?: SandboxDescription,
  ): Promise<void>;
  /**
   * Stores a finished session's summary, adds it to the counters, clears `activeSession`, moves
   * the failure and no-progress streaks as `options` say, and lays `options.checks` over the
   * project's check record, all as one step.
   */
  recordSessionEnd(
    projectId: string,
    summary: SessionSummary,
    options: SessionEndOptions,
  ): Promise<void>;
  /**
   * The project's check record: the last check run of each feature Baton verified (verified
   * progress, `@baton/session` verification.ts), by feature id; `{}` when there is none. The
   * next session gets it as `verification.previous`.
   */
  readChecks(projectId: string): Promise<FeatureChecks>;
  /** The finished sessions' summaries, oldest first. */
  listSessions(projectId: string): Promise<SessionSummary[]>;
  /** A checkpoint the project's remote acknowledged: the next session starts from it. */
  setLastCheckpoint(projectId: string, commit: string): Promise<void>;
  /** A user's resume: the failure, no-progress and useless-context-fill streaks start again from zero. */
  resetFailures(projectId: string): Promise<void>;
  /** Appends one event to the project's log; returns its id in that log. */
  appendEvent(projectId: string, event: WorkerEvent | LoggedEvent): Promise<string>;
  /** Events after `fromId` (default: from the first), at most `count` (default 100), oldest first. */
  readEvents(
    projectId: string,
    options?: { fromId?: string | undefined; count?: number | undefined },
  ): Promise<EventEntry[]>;
  /** Removes the project and everything recorded about it. */
  delete(projectId: string): Promise<void>;
}

/**
 * Any event the log takes: every event is JSON, versioned with `v`, and carries `type`, `at` and
 * `projectId` (the session's `SessionEvent`s, the chain's and control's `WorkerEvent`s).
 */
export interface LoggedEvent {
  v: number;
  type: string;
  at: number;
  projectId: string;
}

/** What `create` takes: the project's configuration and source, without any state. */
export type NewProjectRecord = Omit<
  ProjectRecord,
  | 'status'
  | 'statusReason'
  | 'statusAt'
  | 'counters'
  | 'activeSession'
  | 'lastError'
  | 'sessionSandbox'
  | 'lastCheckpoint'
> & {
  /** A re-created project continues from the branch Baton already pushed for it. */
  lastCheckpoint?: string | null | undefined;
};

export interface TransitionOptions {
  /** Statuses the project may move from. Default: any. */
  from?: readonly ProjectStatus[] | undefined;
  reason?: string | null | undefined;
  /** The move is a pause because a project budget was used up (webhooks tell it apart). */
  budgetReached?: boolean | undefined;
}

export type TransitionResult =
  { ok: true; from: ProjectStatus } | { ok: false; current: ProjectStatus | null };

/** What `recordSessionEnd` moves besides the summary. */
export interface SessionEndOptions {
  /** The session failed: the failure streak grows and `lastError` is set. */
  failed: boolean;
  progress?: SessionProgress | undefined;
  /**
   * The session's context window filled before it did anything useful (true: the
   * `uselessContextFills` streak grows), or it ran and did not (false: the streak ends);
   * undefined leaves the streak as it is (a session cut short by a shutdown or a lost lease).
   */
  uselessContextFill?: boolean | undefined;
  /**
   * The entries of the project's check record this session changed (`changedChecks` of the
   * record before and `SessionResult.checks`). Default: none.
   */
  checks?: FeatureChecks | undefined;
}

/** What a session did for the no-progress streak (`sessionProgress` in chaining.ts decides). */
export type SessionProgress = 'progressed' | 'none' | 'neutral';

/** What is stored about each finished session. */
export interface SessionSummary {
  sessionId: string;
  sessionNumber: number;
  kind: string;
  outcome: string;
  reason: string;
  interrupted: boolean;
  turns: number;
  /** Uncached input tokens (the API's `input_tokens`). */
  inputTokens: number;
  /** Input tokens read from the prompt cache. */
  cacheReadInputTokens: number;
  /** Input tokens written to the prompt cache, 5-minute and 1-hour writes together. */
  cacheCreationInputTokens: number;
  outputTokens: number;
  clearedInputTokens: number;
  costUsd: number;
  featuresBefore: { passing: number; total: number };
  featuresAfter: { passing: number; total: number };
  flippedFeatures: string[];
  startedAt: number;
  endedAt: number;
  jobId: string;
  workerId: string;
  error?: string | undefined;
  /** Every commit the session's checkpoints made, oldest first. */
  commits: string[];
  /** The end-of-session checkpoint; absent when the session saved none. */
  checkpoint?: SessionCheckpointSummary | undefined;
  /**
   * Verified, claimed, regressed and unverified features after the session, the checks pending on
   * its final commit and what its end-of-session re-run did (absent with verification off).
   */
  verification?: SessionVerification | undefined;
  /**
   * Why the end-of-session checkpoint could not be committed: the session's last changes are not
   * on the branch (the project is paused `checkpoint_failed`). Absent when it was committed.
   */
  checkpointError?: string | undefined;
  /** How many of the session's checkpoints failed (retried later); absent when none did. */
  checkpointFailures?: number;
  /**
   * Replaced sessions' late pushes this session's checkpoints took the branch back from, each
   * stale tip kept on its side branch `keptOn` (docs/decisions/2026-12-04-stale-checkpoint-push.md);
   * absent when none.
   */
  replacedStale?: Array<{ tip: string; fence: number; commits: number; keptOn: string }>;
  /**
   * The model the session started on (`unrecorded` for a session stored before models were
   * kept whose start event and project named none: see migrations/session-summaries.ts).
   */
  model: string;
  /** Set when the session moved to its fallback model because `from` stayed overloaded. */
  fallback?: { from: string; to: string; turn: number; at: number } | undefined;
  /** The session's MCP servers at its end: state, tool count, and the line when not ready. */
  mcp?:
    | Array<{ server: string; state: string; tools: number; message?: string | undefined }>
    | undefined;
  /**
   * Set when the stored summary could not be decoded (`session-summary-decoder.ts`): what was
   * wrong. The row then has outcome `malformed`, kind `unknown`, its id and number if it had
   * them, and zeros and empty lists for the rest.
   */
  malformed?: string | undefined;
}

/** What a session summary keeps of its end-of-session checkpoint. */
export interface SessionCheckpointSummary {
  /** The branch tip after it. */
  head: string | null;
  /** True when `head` reached the project's remote. */
  pushed: boolean;
  hooks: 'passed' | 'refused' | 'skipped' | 'none';
  /** Files left out as secrets. */
  skipped: string[];
  /** Files left out because they are larger than the per-file limit. */
  tooLarge?: Array<{ path: string; bytes: number }>;
  /** FIFOs, sockets, devices and names git refuses, left out (git cannot store them). */
  special?: Array<{ path: string; kind: 'fifo' | 'socket' | 'device' | 'refused-name' }>;
  /** Why it was not pushed. */
  error?: string | undefined;
}
