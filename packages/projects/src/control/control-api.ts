// The control API's contract: what the CLI, the dashboard and the worker may ask of projects.
// `RedisBatonControl` (control.ts, made by `createBatonControl`) implements it on Redis.
import type { FileVersion, RedisMemoryStore } from '@baton/storage-redis';
import type {
  FeatureChecks,
  OperatorGuidance,
  SearchOptions,
  SearchResult,
  Transcript,
  TranscriptSummary,
} from '@baton/session';
import type { EventEntry } from '../events.js';
import type { ProjectEvents, WaitForEventsOptions } from '../internal/event-waiter.js';
import type { BatonKeys } from '../keys.js';
import type { StoredGuidance } from '../operator.js';
import type { ProjectRecord, ProjectStatus, StatusTransition } from '../project.js';
import type {
  FeatureFlip,
  ProjectChanges,
  ProjectCounts,
  ProjectPage,
  ReadEventsOptions,
  SessionSummary,
  SessionWindow,
} from '../project-repository.js';
import type { StuckProject } from '../reconcile.js';
import type { ProjectProblems } from './problems.js';
import type { DeploymentMarker } from '../redis-safety.js';
import type { SourcePolicy } from '../source-policy.js';
import type { WebhookDeliveryRecord } from '../webhooks/webhook-delivery.js';

export type { ProjectEvents, WaitForEventsOptions };

export interface FollowEventsOptions {
  /** Start after this stream id; default `0-0` (the whole retained history). Use `$` for new events only. */
  fromId?: string | undefined;
  /** Entries fetched per call. Default 100. */
  count?: number | undefined;
  /** Longest single XREAD BLOCK (ms). Default 5000. */
  blockMs?: number | undefined;
  /** Stops the iteration. */
  signal?: AbortSignal | undefined;
}

/** What `cancel` did. */
export interface CancelResult {
  project: ProjectRecord;
  /** The queued job that was removed, if any. */
  removedJobId: string | null;
}

/** What `pause` did. */
export interface PauseResult {
  project: ProjectRecord;
  /** The queued job that was removed, if any. */
  removedJobId: string | null;
  /** The running session that now closes its log and stops, if any. */
  runningSessionId: string | null;
  /** False when the project was already paused (nothing changed). */
  changed: boolean;
}

/**
 * The control API shared by the CLI and the dashboard: create, queue, resume and cancel projects,
 * read their records, sessions and events, and open their memory. Every call waits for Redis
 * first and fails with `redis_unreachable` (one readable line) if it does not answer.
 */
export interface BatonControl {
  keys: BatonKeys;
  /**
   * Validates and stores a new project (status `queued`, no job yet: call `enqueue`). A `repo`
   * is read (never written) to resolve `base` to a commit and to check that `baton/<id>` is free
   * or Baton's own for this project; a repository, base or branch that fails that is refused
   * with `invalid_input` and one line, and nothing is stored. The project's context config is
   * `loadContextConfigInput` here (`baton.config.json` in `cwd` < `BATON_CONTEXT_*` of `env` <
   * the input's `context` < its `contextPreset`), stored with the project.
   */
  createProject(
    input: unknown,
    createOptions?: { sourcePolicy?: SourcePolicy | undefined },
  ): Promise<ProjectRecord>;
  /** Queues the project's next session (a freshly created or `queued` project). */
  enqueue(projectId: string): Promise<{ jobId: string; added: boolean }>;
  /**
   * Continues a `paused`, `cancelled` or `failed` project (or re-queues a stuck `queued` one, or
   * a `running` one no worker holds).
   */
  resume(projectId: string): Promise<{ project: ProjectRecord; jobId: string; added: boolean }>;
  /**
   * Why nothing runs a `queued` or `running` project (no live session job and no lease; with the
   * failed job's reason when there is one) and the one command that fixes it; null otherwise.
   */
  findStuck(project: ProjectRecord): Promise<StuckProject | null>;
  /**
   * Every stuck project, every project a session job names that Redis no longer has, and every
   * fragment of a record Redis lost, each with its problem and fix: the marker lines of `baton
   * status` and the dashboard's projects page. Reads the queued/running indexes and the session
   * jobs in pipelines, and SCANs the project hashes under the prefix up to a bound
   * (`incomplete` says when it stopped there).
   */
  findProblems(): Promise<ProjectProblems>;
  /**
   * The deployment marker the workers wrote in this Redis, or null: no worker ever ran here, or
   * Redis lost its data (redis-safety.ts).
   */
  readDeploymentMarker(): Promise<DeploymentMarker | null>;
  /** Marks the project `cancelled`, removes its queued job and aborts its running session. */
  cancel(projectId: string): Promise<CancelResult>;
  /**
   * Marks a queued or running project `paused` (reason `paused by operator`): its queued job is
   * removed; its running session gets its end-of-session turn and no next session is queued.
   * `resume` continues it. Pausing a paused project changes nothing; a finished one is a conflict.
   */
  pause(projectId: string): Promise<PauseResult>;
  /**
   * Sends the operator's guidance: the running session gets it at its next model turn, and the
   * next session's first message carries it while no session acknowledged it. Refuses empty or
   * too long text (`invalid_input`) and a completed, failed or cancelled project (`conflict`).
   */
  say(
    projectId: string,
    text: string,
  ): Promise<{ guidance: OperatorGuidance; project: ProjectRecord }>;
  /** The project's kept guidance, oldest first, with who acknowledged each. */
  listGuidance(projectId: string): Promise<StoredGuidance[]>;
  getProject(projectId: string): Promise<ProjectRecord | null>;
  /**
   * When `projectId` is half-written (a record hash without its configuration, left by a write
   * after Redis lost its data): its field names. `null` otherwise. Creating the project again
   * repairs it.
   */
  findFragment(projectId: string): Promise<string[] | null>;
  /** Every project (oldest first): the CLI's listing. A fleet view pages with `pageProjects`. */
  listProjects(options?: { status?: ProjectStatus | undefined }): Promise<ProjectRecord[]>;
  /**
   * One page of projects, sorted (`created`, `updated` or `id`, `desc` by default), filtered by
   * status and by a case-insensitive search of id and goal, after a cursor (`nextCursor` of the
   * previous page: a sort key and an id, so concurrent creates and moves never shift the pages).
   * Costs the page, not the fleet. A bad query is `invalid_input` naming the field.
   */
  pageProjects(query?: unknown): Promise<ProjectPage>;
  /** Projects per status and in all (one ZCARD each). */
  countProjects(): Promise<ProjectCounts>;
  /**
   * The projects changed after `version` of the change feed (0 = every project ever changed), at
   * most `limit` (default 500): status moves, counters, active session, checkpoint, deletion.
   */
  projectChanges(version: number, options?: { limit?: number }): Promise<ProjectChanges>;
  /** The change feed's current version: start `projectChanges` from here to see new changes only. */
  projectChangeVersion(): Promise<number>;
  listSessions(projectId: string): Promise<SessionSummary[]>;
  /**
   * Feature id → the latest session that flipped it to passing. Costs the project's feature
   * count, not its sessions (one pipelined HGET + HGETALL).
   */
  featureFlips(projectId: string): Promise<Map<string, FeatureFlip>>;
  /** The project's check record (verified progress): each feature's last check run. */
  readChecks(projectId: string): Promise<FeatureChecks>;
  /**
   * The newest `limit` session summaries (default 50, at most 1,000) before `beforeIndex` (a
   * previous window's `startIndex`; default: the newest), oldest first: O(shown).
   */
  pageSessions(
    projectId: string,
    options?: { limit?: number | undefined; beforeIndex?: number | undefined },
  ): Promise<SessionWindow>;
  listTransitions(projectId: string): Promise<StatusTransition[]>;
  readEvents(projectId: string, options?: ReadEventsOptions): Promise<EventEntry[]>;
  /** Yields events as they arrive (blocking reads on a connection of its own) until aborted. */
  followEvents(projectId: string, options?: FollowEventsOptions): AsyncIterable<EventEntry>;
  /**
   * One XREAD over several projects' streams: the entries after each project's cursor (a stream
   * id; `0-0` for all), waiting up to `blockMs` when there are none yet. Only projects with new
   * entries are in the result; `[]` after the wait times out or is aborted (and at once when
   * `cursors` is empty). Blocking waits run on
   * a connection the control keeps for them; `close()` ends a pending one.
   */
  waitForEvents(
    cursors: Record<string, string>,
    options: WaitForEventsOptions,
  ): Promise<ProjectEvents[]>;
  /** The project's kept session transcripts, oldest first, without their messages. */
  listTranscripts(projectId: string): Promise<TranscriptSummary[]>;
  /** One session's transcript (by session id), or `null` when none is kept. */
  readTranscript(projectId: string, sessionId: string): Promise<Transcript | null>;
  /**
   * Finds `text` (case-insensitive) in the project's memory files and kept transcripts: memory
   * first, then transcripts newest session first, at most `limit` hits (default 50).
   */
  search(projectId: string, text: string, options?: SearchOptions): Promise<SearchResult>;
  /** The project's memory (a `RedisMemoryStore` on this control's connection). */
  memoryStore(projectId: string): Promise<RedisMemoryStore>;
  /**
   * The kept versions of one memory file (store path, e.g. `features.json`), newest first, at
   * most `limit` (default all kept: the store keeps a few per file). One read of the file and
   * its own history list: the cost does not grow with how often the file, or the namespace,
   * changed.
   */
  memoryHistory(
    projectId: string,
    path: string,
    options?: { limit?: number },
  ): Promise<FileVersion[]>;
  /** The project's latest webhook delivery outcomes, newest first. */
  listWebhookDeliveries(projectId: string): Promise<WebhookDeliveryRecord[]>;
  /** Job counts of the session queue. */
  queueCounts(): Promise<Record<string, number>>;
  /** Deletes a project's records, events and memory (not its workspace). */
  deleteProject(projectId: string): Promise<void>;
  /** Closes what this control opened. */
  close(): Promise<void>;
}
