import { projectBranch, type ProjectSandbox, type SandboxDescription } from '@baton/workspace';
import { ProjectError } from './errors.js';
import type { EventEntry, StreamEvent, WorkerEvent } from './events.js';
import { defineScripts } from './internal/scripts.js';
import { SCRIPT_STATUS } from './internal/status.js';
import type { RedisClient } from './redis-connection.js';
import type { BatonKeys } from './keys.js';
import type { WebhookDeliveryRecord } from './webhooks/webhook-delivery.js';
import {
  emptyCounters,
  type ActiveSessionInfo,
  type ProjectCounters,
  type ProjectRecord,
  type ProjectStatus,
  type StatusTransition,
} from './project.js';

/** What the worker stores about each finished session. */
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
  /** Input tokens read from the prompt cache (absent in summaries stored before caching). */
  cacheReadInputTokens?: number;
  /** Input tokens written to the prompt cache, 5-minute and 1-hour writes together. */
  cacheCreationInputTokens?: number;
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
  error?: string;
  /** Every commit the session's checkpoints made, oldest first. */
  commits?: string[];
  /** The end-of-session checkpoint; absent when the session saved none. */
  checkpoint?: SessionCheckpointSummary;
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
  /** Why it was not pushed. */
  error?: string;
}

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

export interface ReadEventsOptions {
  /** Return entries strictly after this stream id. Default: from the beginning. */
  fromId?: string;
  /** Most entries returned. Default 100. */
  count?: number;
  /** Block up to this long for new entries when none are there yet (needs a connection that may block). */
  blockMs?: number;
}

/** What a session did for the no-progress streak (`sessionProgress` in chaining.ts decides). */
export type SessionProgress = 'progressed' | 'none' | 'neutral';

export type TransitionResult =
  { ok: true; from: ProjectStatus } | { ok: false; current: ProjectStatus | null };

const COUNTER_FIELDS: readonly (keyof ProjectCounters)[] = [
  'sessions',
  'sessionsStarted',
  'featuresPassing',
  'featuresTotal',
  'inputTokens',
  'cacheReadInputTokens',
  'cacheCreationInputTokens',
  'outputTokens',
  'clearedInputTokens',
  'costUsd',
  'consecutiveFailures',
  'sessionsWithoutProgress',
  'interruptions',
];

/**
 * Projects in Redis: one hash per project (config, status, counters), a list of status
 * transitions, a list of session summaries and a capped event stream. Counters are separate hash
 * fields updated with HINCRBY so a control call (cancel) and a worker never overwrite each other.
 */
export class ProjectRepository {
  readonly redis: RedisClient;
  readonly keys: BatonKeys;
  private readonly maxEvents: number;
  private readonly maxSessions: number;
  private readonly maxTransitions: number;
  private readonly maxWebhookDeliveries: number;
  private readonly onStatusChange: ProjectRepositoryOptions['onStatusChange'];

  constructor(options: ProjectRepositoryOptions) {
    this.redis = options.redis;
    this.keys = options.keys;
    this.maxEvents = options.maxEvents ?? 10_000;
    this.maxSessions = options.maxSessions ?? 1_000;
    this.maxTransitions = options.maxTransitions ?? 500;
    this.maxWebhookDeliveries = options.maxWebhookDeliveries ?? 50;
    this.onStatusChange = options.onStatusChange;
  }

  /** Stores a new project in status `queued`; throws `conflict` if the id is taken. */
  async create(
    record: Omit<
      ProjectRecord,
      | 'status'
      | 'statusReason'
      | 'statusAt'
      | 'counters'
      | 'activeSession'
      | 'lastError'
      | 'sessionSandbox'
    > & { lastCheckpoint?: string | null },
  ): Promise<ProjectRecord> {
    const now = record.createdAt;
    const config = {
      goal: record.goal,
      workspace: record.workspace,
      model: record.model,
      budgets: record.budgets,
      contextPreset: record.contextPreset,
      ...(record.sandbox === null ? {} : { sandbox: record.sandbox }),
      repo: record.repo,
      base: record.base,
      baseCommit: record.baseCommit,
      branch: record.branch,
      skipHooks: record.skipHooks,
    };
    const transition: StatusTransition = { at: now, from: null, to: 'queued', reason: 'created' };
    const fields: (string | number)[] = [
      'id',
      record.id,
      'config',
      JSON.stringify(config),
      'createdAt',
      now,
      'status',
      'queued',
      'statusReason',
      'created',
      'statusAt',
      now,
    ];
    // A re-created project continues from the branch Baton already pushed for it.
    if (record.lastCheckpoint) fields.push('lastCheckpoint', record.lastCheckpoint);
    for (const field of COUNTER_FIELDS) fields.push(field, 0);
    const created = await defineScripts(this.redis).batonCreateProject(
      this.keys.project(record.id),
      this.keys.projects,
      this.keys.transitions(record.id),
      record.id,
      now,
      JSON.stringify(transition),
      ...fields,
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
  async list(options: { status?: ProjectStatus } = {}): Promise<ProjectRecord[]> {
    const ids = await this.redis.zrange(this.keys.projects, '0', '-1');
    const projects: ProjectRecord[] = [];
    // Batches keep one pipeline from holding thousands of replies at once.
    for (let start = 0; start < ids.length; start += 200) {
      const batch = ids.slice(start, start + 200);
      const pipeline = this.redis.pipeline();
      for (const id of batch) pipeline.hgetall(this.keys.project(id));
      const replies = (await pipeline.exec()) ?? [];
      for (const [error, hash] of replies) {
        if (error) throw error;
        const project = parseProjectHash(hash as Record<string, string>);
        if (project && (options.status === undefined || project.status === options.status)) {
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
    options: {
      from?: readonly ProjectStatus[];
      reason?: string | null;
      /** The move is a pause because a project budget was used up (webhooks tell it apart). */
      budgetReached?: boolean;
    } = {},
  ): Promise<TransitionResult> {
    const now = Date.now();
    const reason = options.reason ?? '';
    const reply = (await defineScripts(this.redis).batonTransition(
      this.keys.project(projectId),
      this.keys.transitions(projectId),
      to,
      reason,
      now,
      options.from ? options.from.join(',') : '*',
      this.maxTransitions,
    )) as [number, string];
    const [code, status] = reply;
    if (code === SCRIPT_STATUS.missing) return { ok: false, current: null };
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
    if (this.onStatusChange) {
      await this.onStatusChange({
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
    const pipeline = this.redis.pipeline();
    pipeline.hset(key, 'activeSession', JSON.stringify(active));
    if (sandbox !== undefined) pipeline.hset(key, 'sessionSandbox', JSON.stringify(sandbox));
    if (interrupted) pipeline.hincrby(key, 'interruptions', 1);
    await execPipeline(pipeline);
    // Only the lease holder writes sessionsStarted, so read-then-write cannot race.
    const started = Number(await this.redis.hget(key, 'sessionsStarted')) || 0;
    if (active.sessionNumber > started) {
      await this.redis.hset(key, 'sessionsStarted', active.sessionNumber);
    }
  }

  /** Stores a finished session's summary and adds it to the project's counters. */
  async recordSessionEnd(
    projectId: string,
    summary: SessionSummary,
    options: { failed: boolean; progress?: SessionProgress },
  ): Promise<void> {
    const key = this.keys.project(projectId);
    const pipeline = this.redis.pipeline();
    pipeline.hincrby(key, 'sessions', 1);
    pipeline.hincrby(key, 'inputTokens', summary.inputTokens);
    pipeline.hincrby(key, 'cacheReadInputTokens', summary.cacheReadInputTokens ?? 0);
    pipeline.hincrby(key, 'cacheCreationInputTokens', summary.cacheCreationInputTokens ?? 0);
    pipeline.hincrby(key, 'outputTokens', summary.outputTokens);
    pipeline.hincrby(key, 'clearedInputTokens', summary.clearedInputTokens);
    pipeline.hincrbyfloat(key, 'costUsd', summary.costUsd);
    pipeline.hset(
      key,
      'featuresPassing',
      summary.featuresAfter.passing,
      'featuresTotal',
      summary.featuresAfter.total,
    );
    if (options.failed) {
      pipeline.hincrby(key, 'consecutiveFailures', 1);
      pipeline.hset(key, 'lastError', summary.error ?? summary.reason);
    } else {
      pipeline.hset(key, 'consecutiveFailures', 0);
    }
    if (options.progress === 'progressed') pipeline.hset(key, 'sessionsWithoutProgress', 0);
    if (options.progress === 'none') pipeline.hincrby(key, 'sessionsWithoutProgress', 1);
    pipeline.hdel(key, 'activeSession');
    pipeline.rpush(this.keys.sessions(projectId), JSON.stringify(summary));
    pipeline.ltrim(this.keys.sessions(projectId), -this.maxSessions, -1);
    await execPipeline(pipeline);
  }

  /**
   * Records a checkpoint the project's remote acknowledged: the next session, on any worker,
   * starts from it. Only a descendant should be written (the pushing worker holds the lease).
   */
  async setLastCheckpoint(projectId: string, commit: string): Promise<void> {
    await this.redis.hset(this.keys.project(projectId), 'lastCheckpoint', commit);
  }

  /** Clears the active-session marker without counting a session (a skipped or aborted claim). */
  async clearActiveSession(projectId: string): Promise<void> {
    await this.redis.hdel(this.keys.project(projectId), 'activeSession');
  }

  /** A user's resume: the failure and no-progress streaks start again from zero. */
  async resetFailures(projectId: string): Promise<void> {
    await this.redis.hset(
      this.keys.project(projectId),
      'consecutiveFailures',
      0,
      'sessionsWithoutProgress',
      0,
    );
  }

  async listSessions(projectId: string): Promise<SessionSummary[]> {
    const entries = await this.redis.lrange(this.keys.sessions(projectId), 0, -1);
    return entries.map((entry) => JSON.parse(entry) as SessionSummary);
  }

  /**
   * Stores a webhook delivery's outcome (newest first, capped) and publishes it as a
   * `webhook-delivery` event, for `baton status`, `baton logs` and the dashboard.
   */
  async recordWebhookDelivery(record: WebhookDeliveryRecord): Promise<void> {
    const key = this.keys.webhookDeliveries(record.projectId);
    const pipeline = this.redis.pipeline();
    pipeline.lpush(key, JSON.stringify(record));
    pipeline.ltrim(key, 0, this.maxWebhookDeliveries - 1);
    await execPipeline(pipeline);
    await this.appendEvent(record.projectId, {
      v: 1,
      type: 'webhook-delivery',
      at: record.at,
      projectId: record.projectId,
      notificationId: record.notificationId,
      webhookType: record.type,
      target: record.target,
      ok: record.ok,
      attempts: record.attempts,
      ...(record.status === undefined ? {} : { status: record.status }),
      ...(record.error === undefined ? {} : { error: record.error }),
    });
  }

  /** The project's latest webhook delivery outcomes, newest first. */
  async listWebhookDeliveries(projectId: string): Promise<WebhookDeliveryRecord[]> {
    const entries = await this.redis.lrange(this.keys.webhookDeliveries(projectId), 0, -1);
    return entries.map((entry) => JSON.parse(entry) as WebhookDeliveryRecord);
  }

  /** Appends an event to the project's capped stream; returns its stream id. */
  async appendEvent(
    projectId: string,
    event: WorkerEvent | { v: number; type: string; at: number; projectId: string },
  ): Promise<string> {
    const id = await this.redis.xadd(
      this.keys.events(projectId),
      'MAXLEN',
      '~',
      this.maxEvents,
      '*',
      'e',
      JSON.stringify(event),
    );
    return id ?? '';
  }

  /**
   * Reads events after `fromId`. With `blockMs`, waits for new entries using XREAD BLOCK: give
   * it a connection of its own (a blocked connection serves nobody else).
   */
  async readEvents(
    projectId: string,
    options: ReadEventsOptions = {},
    redis: RedisClient = this.redis,
  ): Promise<EventEntry[]> {
    const count = options.count ?? 100;
    const key = this.keys.events(projectId);
    if (options.blockMs !== undefined) {
      const reply = (await redis.xread(
        'COUNT',
        count,
        'BLOCK',
        options.blockMs,
        'STREAMS',
        key,
        options.fromId ?? '0-0',
      )) as [string, [string, string[]][]][] | null;
      return reply ? parseEntries(reply[0]?.[1] ?? []) : [];
    }
    const start = options.fromId ? `(${options.fromId}` : '-';
    const entries = (await redis.xrange(key, start, '+', 'COUNT', count)) as [string, string[]][];
    return parseEntries(entries);
  }

  /**
   * Reads events of several projects in one XREAD, after each project's cursor. With `blockMs`,
   * waits up to that long when none has new entries (give it a connection of its own). The keys
   * share the prefix's hash tag, so one XREAD over them is valid on Redis Cluster.
   */
  async readEventsOfProjects(
    cursors: Record<string, string>,
    options: { count: number; blockMs?: number },
    redis: RedisClient = this.redis,
  ): Promise<Array<{ projectId: string; entries: EventEntry[] }>> {
    const projectIds = Object.keys(cursors);
    if (projectIds.length === 0) return [];
    const byKey = new Map(projectIds.map((id) => [this.keys.events(id), id]));
    const streams = [...byKey.keys(), ...projectIds.map((id) => cursors[id] ?? '0-0')];
    const reply = (
      options.blockMs === undefined
        ? await redis.xread('COUNT', options.count, 'STREAMS', ...streams)
        : await redis.xread('COUNT', options.count, 'BLOCK', options.blockMs, 'STREAMS', ...streams)
    ) as [string, [string, string[]][]][] | null;
    const result: Array<{ projectId: string; entries: EventEntry[] }> = [];
    for (const [key, entries] of reply ?? []) {
      const projectId = byKey.get(key);
      if (projectId !== undefined) result.push({ projectId, entries: parseEntries(entries) });
    }
    return result;
  }

  /** Removes every key of a project (tests, `baton` cleanup). Memory is not touched. */
  async delete(projectId: string): Promise<void> {
    const pipeline = this.redis.pipeline();
    pipeline.del(
      this.keys.project(projectId),
      this.keys.transitions(projectId),
      this.keys.sessions(projectId),
      this.keys.events(projectId),
      this.keys.lease(projectId),
      this.keys.guidance(projectId),
      this.keys.guidanceAcks(projectId),
      this.keys.webhookDeliveries(projectId),
    );
    pipeline.zrem(this.keys.projects, projectId);
    await execPipeline(pipeline);
  }
}

async function execPipeline(pipeline: { exec(): Promise<[Error | null, unknown][] | null> }) {
  const replies = (await pipeline.exec()) ?? [];
  for (const [error] of replies) if (error) throw error;
}

function parseEntries(entries: [string, string[]][]): EventEntry[] {
  const result: EventEntry[] = [];
  for (const [id, fields] of entries) {
    const index = fields.indexOf('e');
    const raw = index >= 0 ? fields[index + 1] : undefined;
    if (raw === undefined) continue;
    try {
      result.push({ id, event: JSON.parse(raw) as StreamEvent });
    } catch {
      // A malformed entry is skipped rather than breaking every reader of the stream.
    }
  }
  return result;
}

function parseProjectHash(hash: Record<string, string> | null | undefined): ProjectRecord | null {
  if (!hash || hash.id === undefined || hash.config === undefined) return null;
  const config = JSON.parse(hash.config) as Partial<
    Pick<
      ProjectRecord,
      | 'goal'
      | 'workspace'
      | 'model'
      | 'budgets'
      | 'contextPreset'
      | 'repo'
      | 'base'
      | 'baseCommit'
      | 'branch'
      | 'skipHooks'
    >
  > & { goal: string; sandbox?: ProjectSandbox };
  const counters = emptyCounters();
  for (const field of COUNTER_FIELDS) {
    const value = Number(hash[field]);
    counters[field] = Number.isFinite(value) ? value : 0;
  }
  return {
    id: hash.id,
    goal: config.goal,
    workspace: config.workspace ?? null,
    repo: config.repo ?? null,
    base: config.base ?? null,
    baseCommit: config.baseCommit ?? null,
    branch: config.branch ?? projectBranch(hash.id),
    skipHooks: config.skipHooks === true,
    model: config.model ?? null,
    budgets: config.budgets ?? {},
    contextPreset: config.contextPreset ?? 'coding',
    sandbox: config.sandbox ?? null,
    sessionSandbox: hash.sessionSandbox
      ? (JSON.parse(hash.sessionSandbox) as SandboxDescription)
      : null,
    createdAt: Number(hash.createdAt) || 0,
    status: (hash.status ?? 'queued') as ProjectStatus,
    statusReason: hash.statusReason ? hash.statusReason : null,
    statusAt: Number(hash.statusAt) || 0,
    counters,
    activeSession: hash.activeSession
      ? (JSON.parse(hash.activeSession) as ActiveSessionInfo)
      : null,
    lastError: hash.lastError ? hash.lastError : null,
    lastCheckpoint: hash.lastCheckpoint ? hash.lastCheckpoint : null,
  };
}
