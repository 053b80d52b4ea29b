import type { FeatureChecks } from '@baton/session';
import type { SandboxDescription } from '@baton/workspace';
import { ProjectError } from './errors.js';
import type { EventEntry, WorkerEvent } from './events.js';
import { execPipeline, scriptPipeline, type ScriptPipeline } from './internal/pipeline.js';
import { scripts } from './internal/scripts.js';
import { retryRefused } from './internal/refused-retry.js';
import { SCRIPT_STATUS } from './internal/status.js';
import {
  fencedError,
  writeBatch,
  type ProjectFence,
  type WriteBatch,
} from './internal/write-batch.js';
import type { BatonKeys } from './keys.js';
import type {
  LoggedEvent,
  NewProjectRecord,
  ProjectLog,
  SessionEndOptions,
  SessionSummary,
  TransitionOptions,
  TransitionResult,
} from './project-log.js';
import type {
  ActiveSessionInfo,
  ProjectRecord,
  ProjectStatus,
  StatusTransition,
} from './project.js';
import type { RedisClient } from '@baton/storage-redis';
import { ProjectEventStreams, type ReadEventsOptions } from './repository/event-stream.js';
import {
  FleetIndex,
  type ProjectChanges,
  type ProjectCounts,
  type ProjectPage,
  type ProjectPageQuery,
} from './repository/fleet-index.js';
import { newProjectHashFields, parseProjectHash, searchText } from './repository/project-hash.js';
import { SessionLog, type FeatureFlip, type SessionWindow } from './repository/session-log.js';
import { WebhookDeliveries } from './repository/webhook-deliveries.js';
import { deleteTranscripts } from './transcripts.js';
import type { WebhookDeliveryRecord } from './webhooks/webhook-delivery.js';
import { recordFreshData } from './migrations/run-migrations.js';

export type {
  SessionCheckpointSummary,
  SessionProgress,
  SessionSummary,
  TransitionResult,
} from './project-log.js';
export type { ReadEventsOptions } from './repository/event-stream.js';
export type {
  ProjectChanges,
  ProjectCounts,
  ProjectPage,
  ProjectPageQuery,
} from './repository/fleet-index.js';
export type { FeatureFlip, SessionWindow } from './repository/session-log.js';

export interface ProjectRepositoryOptions {
  redis: RedisClient;
  keys: BatonKeys;
  /** Approximate cap of each project's event stream (XADD MAXLEN ~). Default 10 000. */
  maxEvents?: number;
  /** Session summaries kept per project. Default 1 000. */
  maxSessions?: number;
  /** Status transitions kept per project. Default 500. */
  maxTransitions?: number;
  /** Webhook delivery outcomes kept per project. Default 50. */
  maxWebhookDeliveries?: number;
  /**
   * Called after every successful status change (webhooks queue their notification here). Its
   * errors are swallowed: the change is already stored and a notification must not undo it.
   */
  onStatusChange?: (change: StatusChange) => Promise<unknown>;
}

/** A status change as `onStatusChange` sees it. */
export interface StatusChange {
  projectId: string;
  from: ProjectStatus;
  to: ProjectStatus;
  reason: string | null;
  /** When it moved (epoch ms). */
  at: number;
  /** The move was a pause because a project budget was used up. */
  budgetReached?: boolean;
}

/**
 * Projects in Redis, the `ProjectLog` the workers, the dashboard and the CLI's Redis verbs use.
 * This file owns the project record (one hash per project: config, status, counters, laid out
 * by `repository/project-hash.ts`) and its status transitions; the other aggregates live beside
 * it in `repository/`, one per file: the event streams, the session log, the fleet index and the
 * webhook deliveries. Counters are separate hash fields updated with HINCRBY so a control call
 * (cancel) and a worker never overwrite each other.
 */
export class ProjectRepository implements ProjectLog {
  readonly redis: RedisClient;
  readonly keys: BatonKeys;
  /** Each project's capped event stream. */
  readonly events: ProjectEventStreams;
  /** Each project's session summaries and feature flips. */
  readonly sessionLog: SessionLog;
  /** Pages, counts and the change feed over every project. */
  readonly index: FleetIndex;
  /** Each project's latest webhook delivery outcomes. */
  readonly webhookDeliveries: WebhookDeliveries;
  readonly #maxTransitions: number;
  readonly #onStatusChange: ProjectRepositoryOptions['onStatusChange'];
  readonly #options: ProjectRepositoryOptions;
  /** Set on a session's fenced view (`fenced`): the project it holds and its lease's token. */
  readonly #fence: { projectId: string; fence: ProjectFence } | undefined;

  constructor(
    options: ProjectRepositoryOptions,
    fence?: { projectId: string; fence: ProjectFence },
  ) {
    this.#options = options;
    this.#fence = fence;
    this.redis = options.redis;
    this.keys = options.keys;
    const context = { redis: options.redis, keys: options.keys };
    this.events = new ProjectEventStreams({ ...context, maxEvents: options.maxEvents ?? 10_000 });
    this.sessionLog = new SessionLog({ ...context, maxSessions: options.maxSessions ?? 1_000 });
    this.index = new FleetIndex(context);
    this.webhookDeliveries = new WebhookDeliveries({
      ...context,
      events: this.events,
      maxDeliveries: options.maxWebhookDeliveries ?? 50,
    });
    this.#maxTransitions = options.maxTransitions ?? 500;
    this.#onStatusChange = options.onStatusChange;
  }

  /**
   * The same projects, seen by the session holding `projectId`'s lease: every write of that
   * project (its start and end, status moves, checkpoints, events) is applied only while the
   * lease still holds `fence.token`, checked by Redis in the same step. Once the lease moved on
   * (the session was cut off and replaced) each write throws `ProjectError('fenced')` and calls
   * `fence.onFenced`. Reads are unchanged. See docs/operations.md "Fencing".
   */
  fenced(projectId: string, fence: ProjectFence): ProjectRepository {
    return new ProjectRepository(this.#options, { projectId, fence });
  }

  /** A batch of writes to `projectId`, fenced on a session's view. */
  #batch(projectId: string): WriteBatch {
    return writeBatch(this.redis, this.keys, projectId, this.#fenceOf(projectId));
  }

  /** The fence of a write to `projectId` (a fenced view writes no other project). */
  #fenceOf(projectId: string): ProjectFence | undefined {
    if (this.#fence === undefined) return undefined;
    if (this.#fence.projectId !== projectId) {
      throw new ProjectError(
        'internal',
        `a session holding ${this.#fence.projectId} tried to write project ${projectId}`,
      );
    }
    return this.#fence.fence;
  }

  /**
   * Stores a new project in status `queued`; throws `conflict` if the id is taken. A half-written
   * project of that id (`fragment`: what a write after Redis lost its data leaves) is repaired:
   * its record fragments are removed and the project is created in their place (its memory and
   * branch, if any, are kept), so `status` and `enqueue` never disagree about it.
   */
  async create(record: NewProjectRecord): Promise<ProjectRecord> {
    // The first project of a fresh prefix is stored in the current shape: nothing to migrate.
    await recordFreshData(this.redis, this.keys);
    try {
      return await this.#create(record);
    } catch (error) {
      if (!(error instanceof ProjectError && error.code === 'conflict')) throw error;
      if ((await this.fragment(record.id)) === null) throw error;
      await this.delete(record.id);
      return this.#create(record);
    }
  }

  /**
   * The field names of `projectId`'s hash when it exists but holds no project (no id or
   * configuration: fragments of a project Redis lost), else `null`.
   */
  async fragment(projectId: string): Promise<string[] | null> {
    const hash = await this.redis.hgetall(this.keys.project(projectId));
    const fields = Object.keys(hash);
    if (fields.length === 0 || parseProjectHash(hash) !== null) return null;
    return fields.sort();
  }

  async #create(record: NewProjectRecord): Promise<ProjectRecord> {
    const now = record.createdAt;
    const transition: StatusTransition = { at: now, from: null, to: 'queued', reason: 'created' };
    const created = await scripts.call(
      this.redis,
      'createProject',
      this.keys.project(record.id),
      this.keys.projects,
      this.keys.transitions(record.id),
      this.keys.projectChanges,
      this.keys.projectVersion,
      record.id,
      now,
      JSON.stringify(transition),
      this.keys.projectIndexBase,
      this.keys.projectSearch,
      searchText(record.id, record.goal),
      ...newProjectHashFields(record),
    );
    if (created !== SCRIPT_STATUS.created) {
      throw new ProjectError('conflict', `project ${record.id} already exists`);
    }
    const stored = await this.get(record.id);
    if (!stored) throw new ProjectError('internal', `project ${record.id} vanished after creation`);
    return stored;
  }

  async get(projectId: string): Promise<ProjectRecord | null> {
    const hash = await this.redis.hgetall(this.keys.project(projectId));
    return parseProjectHash(hash);
  }

  async require(projectId: string): Promise<ProjectRecord> {
    const project = await this.get(projectId);
    if (!project) throw new ProjectError('not_found', `no project with id ${projectId}`);
    return project;
  }

  /** Every project (oldest first), optionally only those in one status. */
  async list(options: { status?: ProjectStatus | undefined } = {}): Promise<ProjectRecord[]> {
    const ids = await this.redis.zrange(this.keys.projects, '0', '-1');
    const projects: ProjectRecord[] = [];
    // Batches keep one pipeline from holding thousands of replies at once.
    for (let start = 0; start < ids.length; start += 200) {
      for (const project of await this.index.getMany(ids.slice(start, start + 200))) {
        if (options.status === undefined || project.status === options.status) {
          projects.push(project);
        }
      }
    }
    return projects;
  }

  /**
   * Moves a project to `to` if its current status is in `from` (or any status when `from` is
   * omitted), records the timestamped transition and publishes a `project-status` event.
   */
  async transition(
    projectId: string,
    to: ProjectStatus,
    options: TransitionOptions = {},
  ): Promise<TransitionResult> {
    const now = Date.now();
    const reason = options.reason ?? '';
    const fence = this.#fenceOf(projectId);
    const send = () =>
      scripts.call(
        this.redis,
        'transition',
        this.keys.project(projectId),
        this.keys.transitions(projectId),
        this.keys.projectChanges,
        this.keys.projectVersion,
        this.keys.lease(projectId),
        to,
        reason,
        now,
        options.from ? options.from.join(',') : '*',
        this.#maxTransitions,
        this.keys.projectIndexBase,
        projectId,
        fence === undefined ? '' : String(fence.token),
      );
    // A session's move is retried while Redis refuses it before running it (full, read-only):
    // nothing was applied. A control call fails at once and says why.
    const reply = (await (fence === undefined ? send() : retryRefused(send))) as [number, string];
    const [code, status] = reply;
    if (code === SCRIPT_STATUS.missing) return { ok: false, current: null };
    if (code === SCRIPT_STATUS.fenced) {
      fence?.onFenced?.();
      throw fencedError(projectId);
    }
    if (code === SCRIPT_STATUS.notAllowed) return { ok: false, current: status as ProjectStatus };
    await this.appendEvent(projectId, {
      v: 1,
      type: 'project-status',
      at: now,
      projectId,
      from: status as ProjectStatus,
      to,
      reason: reason === '' ? null : reason,
      ...(options.budgetReached === true ? { budgetReached: true as const } : {}),
    });
    if (this.#onStatusChange) {
      await this.#onStatusChange({
        projectId,
        from: status as ProjectStatus,
        to,
        reason: reason === '' ? null : reason,
        at: now,
        ...(options.budgetReached === true ? { budgetReached: true } : {}),
      }).catch(() => undefined);
    }
    return { ok: true, from: status as ProjectStatus };
  }

  async transitions(projectId: string): Promise<StatusTransition[]> {
    const entries = await this.redis.lrange(this.keys.transitions(projectId), 0, -1);
    return entries.map((entry) => {
      const parsed = JSON.parse(entry) as StatusTransition & { reason: string | null };
      return { ...parsed, reason: parsed.reason === '' ? null : parsed.reason };
    });
  }

  /** Records the session now holding the project, and where its commands run. */
  async markSessionStart(
    projectId: string,
    active: ActiveSessionInfo,
    interrupted: boolean,
    sandbox?: SandboxDescription,
  ) {
    const key = this.keys.project(projectId);
    // Only the lease holder writes sessionsStarted, so read-then-write cannot race.
    const started = Number(await this.redis.hget(key, 'sessionsStarted')) || 0;
    const batch = this.#batch(projectId);
    batch.hset(key, 'activeSession', JSON.stringify(active));
    if (sandbox !== undefined) batch.hset(key, 'sessionSandbox', JSON.stringify(sandbox));
    if (interrupted) batch.hincrby(key, 'interruptions', 1);
    if (active.sessionNumber > started) batch.hset(key, 'sessionsStarted', active.sessionNumber);
    batch.touch(projectId);
    await batch.exec();
  }

  /** Stores a finished session's summary and adds it to the project's counters. */
  async recordSessionEnd(
    projectId: string,
    summary: SessionSummary,
    options: SessionEndOptions,
  ): Promise<void> {
    const key = this.keys.project(projectId);
    const batch = this.#batch(projectId);
    batch.hincrby(key, 'sessions', 1);
    batch.hincrby(key, 'inputTokens', summary.inputTokens);
    batch.hincrby(key, 'cacheReadInputTokens', summary.cacheReadInputTokens);
    batch.hincrby(key, 'cacheCreationInputTokens', summary.cacheCreationInputTokens);
    batch.hincrby(key, 'outputTokens', summary.outputTokens);
    batch.hincrby(key, 'clearedInputTokens', summary.clearedInputTokens);
    batch.hincrbyfloat(key, 'costUsd', summary.costUsd);
    batch.hset(
      key,
      'featuresPassing',
      summary.featuresAfter.passing,
      'featuresTotal',
      summary.featuresAfter.total,
    );
    if (options.failed) {
      batch.hincrby(key, 'consecutiveFailures', 1);
      batch.hset(key, 'lastError', summary.error ?? summary.reason);
    } else {
      batch.hset(key, 'consecutiveFailures', 0);
    }
    if (options.progress === 'progressed') batch.hset(key, 'sessionsWithoutProgress', 0);
    if (options.progress === 'none') batch.hincrby(key, 'sessionsWithoutProgress', 1);
    if (options.uselessContextFill === true) batch.hincrby(key, 'uselessContextFills', 1);
    if (options.uselessContextFill === false) batch.hset(key, 'uselessContextFills', 0);
    if (summary.verification !== undefined) {
      const { verified, claimed, regressed } = summary.verification;
      batch.hset(
        key,
        'featuresVerified',
        verified,
        'featuresClaimed',
        claimed,
        'featuresRegressed',
        regressed,
      );
    }
    batch.hdel(key, 'activeSession');
    this.sessionLog.appendIn(batch, projectId, summary);
    this.sessionLog.checksIn(batch, projectId, options.checks ?? {});
    batch.touch(projectId);
    await batch.exec();
  }

  /**
   * Records a checkpoint the project's remote acknowledged: the next session, on any worker,
   * starts from it. Only a descendant should be written (the pushing worker holds the lease).
   */
  async setLastCheckpoint(projectId: string, commit: string): Promise<void> {
    const batch = this.#batch(projectId);
    batch.hset(this.keys.project(projectId), 'lastCheckpoint', commit);
    batch.touch(projectId);
    await batch.exec();
  }

  /** A user's resume: the failure and no-progress streaks start again from zero. */
  async resetFailures(projectId: string): Promise<void> {
    const pipeline = scriptPipeline(this.redis);
    pipeline.hset(
      this.keys.project(projectId),
      'consecutiveFailures',
      0,
      'sessionsWithoutProgress',
      0,
      'uselessContextFills',
      0,
    );
    this.#touchIn(pipeline, projectId);
    await execPipeline(pipeline);
  }

  /** Removes every key of a project, its transcripts included (tests, `baton` cleanup). Memory is not touched. */
  async delete(projectId: string): Promise<void> {
    await deleteTranscripts(this.redis, this.keys, projectId);
    const pipeline = scriptPipeline(this.redis);
    // First, while the hash still says where the project sits in the index.
    scripts.queue(
      pipeline,
      'unindexProject',
      this.keys.project(projectId),
      this.keys.projectChanges,
      this.keys.projectVersion,
      this.keys.projectIndexBase,
      this.keys.projectSearch,
      projectId,
    );
    pipeline.del(
      this.keys.project(projectId),
      this.keys.transitions(projectId),
      this.keys.sessions(projectId),
      this.keys.featureFlips(projectId),
      this.keys.checks(projectId),
      this.keys.events(projectId),
      this.keys.lease(projectId),
      this.keys.guidance(projectId),
      this.keys.guidanceAcks(projectId),
      this.keys.webhookDeliveries(projectId),
    );
    pipeline.zrem(this.keys.projects, projectId);
    await execPipeline(pipeline);
  }

  // The other aggregates, under the names the callers and the ProjectLog contract know.

  sessionWindow(
    projectId: string,
    options: { limit: number; beforeIndex?: number | undefined },
  ): Promise<SessionWindow> {
    return this.sessionLog.window(projectId, options);
  }

  listSessions(projectId: string): Promise<SessionSummary[]> {
    return this.sessionLog.list(projectId);
  }

  readChecks(projectId: string): Promise<FeatureChecks> {
    return this.sessionLog.checks(projectId);
  }

  featureFlips(projectId: string): Promise<Map<string, FeatureFlip>> {
    return this.sessionLog.featureFlips(projectId);
  }

  recordWebhookDelivery(record: WebhookDeliveryRecord): Promise<void> {
    return this.webhookDeliveries.record(record);
  }

  listWebhookDeliveries(projectId: string): Promise<WebhookDeliveryRecord[]> {
    return this.webhookDeliveries.list(projectId);
  }

  appendEvent(projectId: string, event: WorkerEvent | LoggedEvent): Promise<string> {
    const fence = this.#fenceOf(projectId);
    if (fence === undefined) return this.events.append(projectId, event);
    return this.events.appendIn(this.#batch(projectId), projectId, event);
  }

  readEvents(
    projectId: string,
    options: ReadEventsOptions = {},
    redis: RedisClient = this.redis,
  ): Promise<EventEntry[]> {
    return this.events.read(projectId, options, redis);
  }

  readEventsOfProjects(
    cursors: Record<string, string>,
    options: { count: number; blockMs?: number },
    redis: RedisClient = this.redis,
  ): Promise<Array<{ projectId: string; entries: EventEntry[] }>> {
    return this.events.readOfProjects(cursors, options, redis);
  }

  page(query: ProjectPageQuery = {}): Promise<ProjectPage> {
    return this.index.page(query);
  }

  counts(): Promise<ProjectCounts> {
    return this.index.counts();
  }

  changeVersion(): Promise<number> {
    return this.index.changeVersion();
  }

  changesSince(version: number, limit?: number): Promise<ProjectChanges> {
    return this.index.changesSince(version, limit);
  }

  /** Adds "this project changed" to a pipeline that changes it. */
  #touchIn(pipeline: ScriptPipeline, projectId: string): void {
    scripts.queue(
      pipeline,
      'touchProject',
      this.keys.projectChanges,
      this.keys.projectVersion,
      projectId,
    );
  }
}
