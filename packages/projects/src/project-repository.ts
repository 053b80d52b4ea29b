import { projectBranch, type ProjectSandbox, type SandboxDescription } from '@baton/workspace';
import { ProjectError } from './errors.js';
import { decodeProjectEventJson } from './event-decoder.js';
import type { EventEntry, WorkerEvent } from './events.js';
import { defineScripts, type ScriptCommands } from './internal/scripts.js';
import { SCRIPT_STATUS } from './internal/status.js';
import type { RedisClient } from './redis-connection.js';
import type { BatonKeys, ProjectSort } from './keys.js';
import { deleteTranscripts } from './transcripts.js';
import type { WebhookDeliveryRecord } from './webhooks/webhook-delivery.js';
import type {
  LoggedEvent,
  NewProjectRecord,
  ProjectLog,
  SessionProgress,
  SessionSummary,
  TransitionOptions,
  TransitionResult,
} from './project-log.js';

export type {
  SessionCheckpointSummary,
  SessionProgress,
  SessionSummary,
  TransitionResult,
} from './project-log.js';
import {
  emptyCounters,
  type ActiveSessionInfo,
  type ProjectCounters,
  PROJECT_STATUSES,
  type ProjectRecord,
  type ProjectStatus,
  type StatusTransition,
} from './project.js';

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
  /**
   * Return the newest `last` entries instead (oldest first), read backwards with XREVRANGE: the
   * cost is the entries returned, not the stream. Not with `fromId` or `blockMs`.
   */
  last?: number;
  /** With `last`: only entries strictly before this stream id (to page backwards). */
  beforeId?: string;
  /** Most entries returned. Default 100. */
  count?: number;
  /** Block up to this long for new entries when none are there yet (needs a connection that may block). */
  blockMs?: number;
}

/** One page of projects: which ones, in which order, after which cursor. */
export interface ProjectPageQuery {
  /** Only projects in these statuses. Default: every status. */
  statuses?: readonly ProjectStatus[];
  /** Order by creation time, last status change or id. Default `created`. */
  sort?: ProjectSort;
  /** Default `desc` (newest first; for `id`, Z to A). */
  order?: 'asc' | 'desc';
  /** Keep projects whose id or goal contains this text (case-insensitive). Default: every one. */
  search?: string;
  /** Most projects returned. Default 50. */
  limit?: number;
  /** A previous page's `nextCursor`: continue strictly after it. Default: from the first. */
  cursor?: string | null;
}

export interface ProjectPage {
  projects: ProjectRecord[];
  /**
   * Where the next page starts (the last project's sort key and id), or `null` after the last
   * page. A search page may hold fewer than `limit` projects and still have a cursor: each call
   * reads a bounded part of the index.
   */
  nextCursor: string | null;
}

/** How many projects there are, per status and in all. */
export interface ProjectCounts {
  counts: Record<ProjectStatus, number>;
  total: number;
}

/** The projects that changed after a version of the change feed. */
export interface ProjectChanges {
  /** Pass it to the next call. */
  version: number;
  /** The changed projects as they are now. */
  projects: ProjectRecord[];
  /** Changed projects that no longer exist. */
  removed: string[];
  /** More changes are waiting beyond `version` (call again at once). */
  more: boolean;
}

/** Index members read per script call: a search never holds Redis longer than this many reads. */
const PAGE_SCAN_CHUNK = 1_000;
/** Index members one page request reads at most before it returns a short page with a cursor. */
const PAGE_SCAN_LIMIT = 20_000;

/** What a search matches: the id and the start of the goal, lowercased once here. */
function searchText(projectId: string, goal: string): string {
  return `${projectId}\n${goal.slice(0, 2_000)}`.toLowerCase();
}

/** The project id at the end of an index member (`<sort key>:<id>` or `<id>`). */
function memberId(member: string): string {
  return member.slice(member.lastIndexOf(':') + 1);
}

/** A window of a project's session summaries (`sessionWindow`). */
export interface SessionWindow {
  /** Oldest first. */
  sessions: SessionSummary[];
  /** Index of the first one among the kept summaries: pass it as `beforeIndex` for older ones. */
  startIndex: number;
  /** Summaries kept. */
  total: number;
}

/** The latest session that flipped a feature to passing. */
export interface FeatureFlip {
  sessionNumber: number;
  sessionId: string;
}

/**
 * Field of the project hash set once the feature-flip hash holds the flips of every stored
 * session summary (summaries stored before that hash existed are folded in on first read).
 */
const FLIPS_INDEXED_FIELD = 'featureFlipsIndexed';

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
export class ProjectRepository implements ProjectLog {
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
  async create(record: NewProjectRecord): Promise<ProjectRecord> {
    const now = record.createdAt;
    const config = {
      goal: record.goal,
      workspace: record.workspace,
      model: record.model,
      ...(record.fallbackModel === null ? {} : { fallbackModel: record.fallbackModel }),
      budgets: record.budgets,
      contextPreset: record.contextPreset,
      context: record.context,
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
      this.keys.projectChanges,
      this.keys.projectVersion,
      record.id,
      now,
      JSON.stringify(transition),
      this.keys.projectIndexBase,
      this.keys.projectSearch,
      searchText(record.id, record.goal),
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
    options: TransitionOptions = {},
  ): Promise<TransitionResult> {
    const now = Date.now();
    const reason = options.reason ?? '';
    const reply = (await defineScripts(this.redis).batonTransition(
      this.keys.project(projectId),
      this.keys.transitions(projectId),
      this.keys.projectChanges,
      this.keys.projectVersion,
      to,
      reason,
      now,
      options.from ? options.from.join(',') : '*',
      this.maxTransitions,
      this.keys.projectIndexBase,
      projectId,
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
    // Only the lease holder writes sessionsStarted, so read-then-write cannot race.
    const started = Number(await this.redis.hget(key, 'sessionsStarted')) || 0;
    const pipeline = this.pipeline();
    pipeline.hset(key, 'activeSession', JSON.stringify(active));
    if (sandbox !== undefined) pipeline.hset(key, 'sessionSandbox', JSON.stringify(sandbox));
    if (interrupted) pipeline.hincrby(key, 'interruptions', 1);
    if (active.sessionNumber > started) pipeline.hset(key, 'sessionsStarted', active.sessionNumber);
    this.touchIn(pipeline, projectId);
    await execPipeline(pipeline);
  }

  /** Stores a finished session's summary and adds it to the project's counters. */
  async recordSessionEnd(
    projectId: string,
    summary: SessionSummary,
    options: { failed: boolean; progress?: SessionProgress | undefined },
  ): Promise<void> {
    const key = this.keys.project(projectId);
    const pipeline = this.pipeline();
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
    const flip = JSON.stringify({
      sessionNumber: summary.sessionNumber,
      sessionId: summary.sessionId,
    } satisfies FeatureFlip);
    for (const id of summary.flippedFeatures)
      pipeline.hset(this.keys.featureFlips(projectId), id, flip);
    pipeline.rpush(this.keys.sessions(projectId), JSON.stringify(summary));
    pipeline.ltrim(this.keys.sessions(projectId), -this.maxSessions, -1);
    this.touchIn(pipeline, projectId);
    await execPipeline(pipeline);
  }

  /**
   * Records a checkpoint the project's remote acknowledged: the next session, on any worker,
   * starts from it. Only a descendant should be written (the pushing worker holds the lease).
   */
  async setLastCheckpoint(projectId: string, commit: string): Promise<void> {
    const pipeline = this.pipeline();
    pipeline.hset(this.keys.project(projectId), 'lastCheckpoint', commit);
    this.touchIn(pipeline, projectId);
    await execPipeline(pipeline);
  }

  /** A user's resume: the failure and no-progress streaks start again from zero. */
  async resetFailures(projectId: string): Promise<void> {
    const pipeline = this.pipeline();
    pipeline.hset(
      this.keys.project(projectId),
      'consecutiveFailures',
      0,
      'sessionsWithoutProgress',
      0,
    );
    this.touchIn(pipeline, projectId);
    await execPipeline(pipeline);
  }

  /**
   * The session summaries just before `beforeIndex` (default: the newest), at most `limit`,
   * oldest first. Indexes count from the oldest kept summary, so a cursor holds while sessions
   * end (they are appended); only the cap (`maxSessions`) moves them. One LLEN and one LRANGE.
   */
  async sessionWindow(
    projectId: string,
    options: { limit: number; beforeIndex?: number },
  ): Promise<SessionWindow> {
    const key = this.keys.sessions(projectId);
    const total = await this.redis.llen(key);
    const end = Math.min(total, options.beforeIndex ?? total);
    const start = Math.max(0, end - options.limit);
    const entries = end > start ? await this.redis.lrange(key, start, end - 1) : [];
    return {
      sessions: entries.map((entry) => JSON.parse(entry) as SessionSummary),
      startIndex: start,
      total,
    };
  }

  async listSessions(projectId: string): Promise<SessionSummary[]> {
    const entries = await this.redis.lrange(this.keys.sessions(projectId), 0, -1);
    return entries.map((entry) => JSON.parse(entry) as SessionSummary);
  }

  /**
   * Which session last flipped each feature to passing: one pipelined HGET + HGETALL of the
   * flip hash (its size is the feature count, whatever the number of sessions). The first read
   * of a project whose summaries predate the hash folds them in once (HSETNX: a flip a session
   * recorded meanwhile is newer and stays).
   */
  async featureFlips(projectId: string): Promise<Map<string, FeatureFlip>> {
    const flipsKey = this.keys.featureFlips(projectId);
    const [indexed, stored] = (await execPipeline(
      this.redis
        .pipeline()
        .hget(this.keys.project(projectId), FLIPS_INDEXED_FIELD)
        .hgetall(flipsKey),
    )) as [string | null, Record<string, string>];
    const flips = new Map<string, FeatureFlip>();
    if (indexed === null) {
      const fromSummaries = new Map<string, string>();
      for (const session of await this.listSessions(projectId)) {
        const flip = JSON.stringify({
          sessionNumber: session.sessionNumber,
          sessionId: session.sessionId,
        } satisfies FeatureFlip);
        for (const id of session.flippedFeatures) fromSummaries.set(id, flip);
      }
      const pipeline = this.redis.pipeline();
      for (const [id, flip] of fromSummaries) {
        pipeline.hsetnx(flipsKey, id, flip);
        stored[id] ??= flip;
      }
      // Only on an existing project: never create a hash for an id that has none.
      pipeline.hsetnx(this.keys.project(projectId), FLIPS_INDEXED_FIELD, '1');
      if ((await this.redis.exists(this.keys.project(projectId))) === 1)
        await execPipeline(pipeline);
    }
    for (const [id, flip] of Object.entries(stored)) flips.set(id, JSON.parse(flip) as FeatureFlip);
    return flips;
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
  async appendEvent(projectId: string, event: WorkerEvent | LoggedEvent): Promise<string> {
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
    if (options.last !== undefined) {
      const end = options.beforeId === undefined ? '+' : `(${options.beforeId}`;
      const entries = (await redis.xrevrange(key, end, '-', 'COUNT', options.last)) as [
        string,
        string[],
      ][];
      return parseEntries(entries.reverse());
    }
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

  /**
   * One page of projects in index order after `cursor`. Each status is its own lex-ordered index,
   * so the page is a ZRANGE BYLEX per status from the cursor (merged here), then one HGETALL per
   * project shown: the cost follows the page, not the fleet. A cursor is a sort key and an id, so
   * projects created or moved meanwhile never shift or repeat the rows of later pages.
   */
  async page(query: ProjectPageQuery = {}): Promise<ProjectPage> {
    const sort = query.sort ?? 'created';
    const order = query.order ?? 'desc';
    const limit = query.limit ?? 50;
    const needle = (query.search ?? '').trim().toLowerCase();
    const statuses =
      query.statuses === undefined || query.statuses.length === 0
        ? ['all']
        : [...new Set(query.statuses)];
    const indexKeys = statuses.map((status) => this.keys.projectIndex(sort, status));
    // `comesFirst(a, b)`: a is shown before b in this order.
    const comesFirst = (left: string, right: string) =>
      order === 'desc' ? left > right : left < right;
    const members: string[] = [];
    let cursor = query.cursor ?? '';
    let nextCursor: string | null = null;
    for (let scanned = 0; ; scanned += PAGE_SCAN_CHUNK) {
      const wanted = limit - members.length;
      const pipeline = this.pipeline() as unknown as ScriptCommands & PipelineLike;
      for (const key of indexKeys) {
        void pipeline.batonPageProjects(
          key,
          this.keys.projectSearch,
          order,
          cursor,
          wanted + 1,
          needle,
          PAGE_SCAN_CHUNK,
        );
      }
      const replies = (await execPipeline(pipeline)) as [number, string, ...string[]][];
      // Every match up to the earliest "last read" of an unfinished index is known; past it, not yet.
      let bound: string | null = null;
      const merged: string[] = [];
      for (const [exhausted, last, ...matches] of replies) {
        merged.push(...matches);
        if (exhausted !== 1 && (bound === null || comesFirst(last, bound))) bound = last;
      }
      merged.sort((left, right) => (left === right ? 0 : comesFirst(left, right) ? -1 : 1));
      const known = bound === null ? merged : merged.filter((member) => !comesFirst(bound, member));
      if (known.length > wanted) {
        members.push(...known.slice(0, wanted));
        nextCursor = members[members.length - 1] ?? null;
        break;
      }
      members.push(...known);
      if (bound === null) break;
      cursor = bound;
      if (members.length >= limit || scanned + PAGE_SCAN_CHUNK >= PAGE_SCAN_LIMIT) {
        nextCursor = bound;
        break;
      }
    }
    const projects = await this.getMany(members.map(memberId));
    return { projects, nextCursor };
  }

  /** Projects per status, from the index (one ZCARD each). */
  async counts(): Promise<ProjectCounts> {
    const pipeline = this.redis.pipeline();
    for (const status of PROJECT_STATUSES) pipeline.zcard(this.keys.projectIndex('id', status));
    pipeline.zcard(this.keys.projectIndex('id', 'all'));
    const replies = (await execPipeline(pipeline)) as number[];
    const counts = {} as Record<ProjectStatus, number>;
    PROJECT_STATUSES.forEach((status, index) => (counts[status] = replies[index] ?? 0));
    return { counts, total: replies[PROJECT_STATUSES.length] ?? 0 };
  }

  /** The current version of the change feed (0 before any change). */
  async changeVersion(): Promise<number> {
    return Number(await this.redis.get(this.keys.projectVersion)) || 0;
  }

  /**
   * The projects changed after `version` (status, counters, active session, checkpoint, deletion),
   * at most `limit` of them: O(changed) however many projects there are.
   */
  async changesSince(version: number, limit = 500): Promise<ProjectChanges> {
    const current = await this.changeVersion();
    if (current <= version) return { version: current, projects: [], removed: [], more: false };
    const reply = await this.redis.zrangebyscore(
      this.keys.projectChanges,
      `(${version}`,
      current,
      'WITHSCORES',
      'LIMIT',
      0,
      limit,
    );
    const ids: string[] = [];
    let last = version;
    for (let index = 0; index < reply.length; index += 2) {
      ids.push(reply[index] as string);
      last = Number(reply[index + 1]);
    }
    const more = ids.length >= limit;
    const projects = await this.getMany(ids);
    const present = new Set(projects.map((project) => project.id));
    return {
      version: more ? last : current,
      projects,
      removed: ids.filter((id) => !present.has(id)),
      more,
    };
  }

  /**
   * Adds projects stored before the index existed (once per prefix; later creates and moves
   * maintain it in their own scripts).
   */
  async ensureIndexed(): Promise<void> {
    if ((await this.redis.exists(this.keys.projectIndexReady)) === 1) return;
    const ids = await this.redis.zrange(this.keys.projects, '0', '-1');
    for (let start = 0; start < ids.length; start += 200) {
      const batch = ids.slice(start, start + 200);
      const read = this.redis.pipeline();
      for (const id of batch) read.hget(this.keys.project(id), 'config');
      const configs = (await execPipeline(read)) as (string | null)[];
      const write = this.pipeline() as unknown as ScriptCommands & PipelineLike;
      batch.forEach((id, index) => {
        const goal = (JSON.parse(configs[index] ?? '{}') as { goal?: string }).goal ?? '';
        void write.batonIndexProject(
          this.keys.project(id),
          this.keys.projectSearch,
          this.keys.projectIndexBase,
          id,
          searchText(id, goal),
        );
      });
      await execPipeline(write);
    }
    await this.redis.set(this.keys.projectIndexReady, '1');
  }

  /** Projects by id in the order given; ids without a project are left out. */
  private async getMany(ids: readonly string[]): Promise<ProjectRecord[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.project(id));
    const hashes = (await execPipeline(pipeline)) as Record<string, string>[];
    const projects: ProjectRecord[] = [];
    for (const hash of hashes) {
      const project = parseProjectHash(hash);
      if (project !== null) projects.push(project);
    }
    return projects;
  }

  /** A pipeline that knows the Lua scripts. */
  private pipeline() {
    return defineScripts(this.redis).pipeline();
  }

  /** Adds "this project changed" to a pipeline that changes it. */
  private touchIn(pipeline: ReturnType<RedisClient['pipeline']>, projectId: string): void {
    void (pipeline as unknown as ScriptCommands).batonTouchProject(
      this.keys.projectChanges,
      this.keys.projectVersion,
      projectId,
    );
  }

  /** Removes every key of a project, its transcripts included (tests, `baton` cleanup). Memory is not touched. */
  async delete(projectId: string): Promise<void> {
    await deleteTranscripts(this.redis, this.keys, projectId);
    const pipeline = this.pipeline();
    // First, while the hash still says where the project sits in the index.
    void (pipeline as unknown as ScriptCommands).batonUnindexProject(
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

interface PipelineLike {
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** Pipelines resolve with per-command errors instead of rejecting: the first one is thrown. */
async function execPipeline(pipeline: PipelineLike): Promise<unknown[]> {
  const replies = (await pipeline.exec()) ?? [];
  for (const [error] of replies) if (error) throw error;
  return replies.map(([, reply]) => reply);
}

function parseEntries(entries: [string, string[]][]): EventEntry[] {
  const result: EventEntry[] = [];
  for (const [id, fields] of entries) {
    const index = fields.indexOf('e');
    const raw = index >= 0 ? fields[index + 1] : undefined;
    // An entry without an event field is not one of ours; a malformed one decodes as unknown.
    if (raw === undefined) continue;
    result.push({ id, event: decodeProjectEventJson(raw) });
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
      | 'fallbackModel'
      | 'budgets'
      | 'contextPreset'
      | 'context'
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
    fallbackModel: config.fallbackModel ?? null,
    budgets: config.budgets ?? {},
    contextPreset: config.contextPreset ?? 'coding',
    // Projects stored before the context config was kept ran their preset alone.
    context: config.context ?? { preset: config.contextPreset ?? 'coding' },
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
