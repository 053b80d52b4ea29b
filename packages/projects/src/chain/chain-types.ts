import type { MemoryStore } from '@baton/core';
import type {
  FeatureChecks,
  readFeatures,
  RunSessionOptions,
  SessionEvent,
  SessionResult,
} from '@baton/session';
import type { ProjectWorkspace, PushRetryOptions } from '@baton/workspace';
import type { AbortReason, ChainDecision } from '../chaining.js';
import type { WorkerEvent } from '../events.js';
import type { ActiveSessionInfo, ProjectRecord, ProjectStatus } from '../project.js';
import type { ProjectLog } from '../project-log.js';
import type { SessionJobReason } from '../session-queue.js';
import type { ChainLogger } from './chain-logger.js';
import type { SessionRunner } from './session-results.js';
import type { PrepareOutcome } from './session-workspace.js';

/** Every event the chain appends to a project's log: the session's own and the chain's. */
export type ChainEvent = SessionEvent | WorkerEvent;

/** Options shared by every session a chain runs (one per worker, one per `baton run`). */
export interface SessionChainOptions {
  /** Where projects are kept: Redis for workers, files under `BATON_HOME` for `baton run`. */
  log: ProjectLog;
  /** Runs one session; default `runSession` from `@baton/session`. */
  runSession: SessionRunner;
  /** Names who ran a session in its summary and events (`baton run`: `local`). */
  workerId: string;
  /** `BATON_HOME`, absolute: the clone of each project lives under it. */
  home: string;
  /** Delay before the next session of a project (ms). */
  chainDelayMs: number;
  /** Delay before retrying after a failed session (ms); doubles with each failure in a row. */
  retryDelayMs: number;
  /** Failed sessions in a row before the project is `failed`. */
  maxConsecutiveFailures: number;
  /** The Messages API client every session uses. */
  client: RunSessionOptions['client'];
  /** Model of projects that name none. */
  defaultModel: string;
  /** Fallback model for projects that name none. Default: none. */
  defaultFallbackModel?: string | undefined;
  /** Retries of checkpoint pushes. Default `@baton/workspace`'s. */
  push?: PushRetryOptions | undefined;
  /** `BATON_MAX_FILE_BYTES`: files larger are left out of checkpoints. Default 50 MiB. */
  maxFileBytes?: number | undefined;
  /** Least time between two checkpoints after turns that changed files (ms). Default the session's. */
  checkpointIntervalMs?: number | undefined;
  /** `BATON_MEMORY_SNAPSHOTS` (`memory-snapshots.ts`). Default true. */
  memorySnapshots?: boolean | undefined;
  /** Sees every event before it is appended (metrics, the terminal). Must not throw. */
  observeEvent?: ((event: ChainEvent) => void) | undefined;
  /** Sees the session's own events only, before `observeEvent` (traces). Must not throw. */
  observeSessionEvent?: ((event: SessionEvent) => void) | undefined;
  /** Default: logs nothing. */
  logger?: ChainLogger | undefined;
}

/** How a running session is told to stop (`SessionControl` implements it). */
export interface ChainControl {
  readonly signal: AbortSignal;
  readonly pauseSignal: AbortSignal;
  readonly abortReason: AbortReason | undefined;
  /** Another process may already run this session again: its record is no longer ours. */
  readonly abandoned: boolean;
}

/** One session to run on one project. */
export interface ChainedSessionRequest {
  projectId: string;
  /** Must be above the project's finished sessions, else the request is skipped. */
  sessionNumber: number;
  /** The queue job behind it (`baton run`: `local-<n>`). */
  jobId: string;
  /**
   * The `createdAt` of the project the job was queued for (`SessionJobData.generation`); the
   * session is refused when the project was created again since. `baton run`: unset.
   */
  generation?: number | undefined;
  control: ChainControl;
  /** The project's memory. */
  memory: (project: ProjectRecord) => MemoryStore | Promise<MemoryStore>;
  /**
   * Where this session writes the project (its start and end, status, checkpoints, events):
   * a worker passes the fenced view of its lease (`ProjectRepository.fenced`), so once the lease
   * moved on every write throws `ProjectError('fenced')` and the session's record is left to the
   * new holder. Default: the chain's `log`.
   */
  log?: ProjectLog | undefined;
  /** Options laid over the chain's `runSession` options (client, tools, transcripts, guidance, context). */
  sessionOptions?: ((project: ProjectRecord) => Partial<RunSessionOptions>) | undefined;
  /**
   * Asked right before every checkpoint push; a reason refuses it (the commit stays in this
   * worker's clone). A worker refuses once its lease moved on, so a replaced session never pushes
   * over the new holder's work. Default: every push goes.
   */
  mayPush?: (() => Promise<string | undefined>) | undefined;
  /**
   * The fencing token of the lease this session holds (`ProjectWorkspaceOptions.fence`): its
   * checkpoint commits carry it, and its push takes the branch back from a replaced session's
   * late push. `baton run`: unset.
   */
  fence?: number | undefined;
  /** Called once the project is claimed (cancel requests can reach the session from now on). */
  onClaimed?: ((sessionId: string) => void) | undefined;
  /** Called when a crashed predecessor is found. */
  onInterrupted?: ((previous: ActiveSessionInfo) => void) | undefined;
  /** Called when the session returned, before anything is recorded (stop renewing leases). */
  onSessionReturned?: (() => void) | undefined;
  /**
   * Queues the next session after a `next` decision; the project is already `queued`. `baton
   * run` leaves it unset and runs the next one itself.
   */
  queueNext?:
    | ((next: {
        sessionNumber: number;
        delayMs: number;
        reason: SessionJobReason;
      }) => Promise<void>)
    | undefined;
}

/** What one step of the chain did. */
export type ChainedSessionOutcome =
  | { ran: false; skipped: string }
  | {
      ran: true;
      sessionId: string;
      result: SessionResult;
      decision: ChainDecision;
      /** The project's status after the decision was carried out (`null`: left as it was). */
      status: ProjectStatus | null;
    };

/** What a claimed session runs on. */
export interface Claim {
  project: ProjectRecord;
  /** The session that held the project before and never finished (its process stopped). */
  previous: ActiveSessionInfo | null;
  extraOptions: Partial<RunSessionOptions>;
}

/** What a prepared session runs with. */
export interface Setup {
  store: MemoryStore;
  workspace: ProjectWorkspace;
  prepared: PrepareOutcome;
  features: Awaited<ReturnType<typeof readFeatures>>;
  kind: SessionResult['kind'];
  /** The project's check record before this session (`verification.previous`). */
  checks: FeatureChecks;
}
