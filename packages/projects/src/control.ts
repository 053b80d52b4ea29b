import type { Queue } from 'bullmq';
import type {
  BatonControl,
  CancelResult,
  FollowEventsOptions,
  PauseResult,
  ProjectEvents,
  WaitForEventsOptions,
} from './control/control-api.js';
import { ProjectError, describeError } from './errors.js';
import type { EventEntry } from './events.js';
import { newProjectRecord, projectContext } from './control/new-project.js';
import { followProjectEvents, readProjectEvents } from './control/event-reads.js';
import type { BatonControlOptions } from './control/control-options.js';
import { findStuck, type StuckProject } from './reconcile.js';
import { findProjectProblems, type ProjectProblems } from './control/problems.js';
import { readDeploymentMarker, type DeploymentMarker } from './redis-safety.js';
import { requireMigratedData } from './migrations/run-migrations.js';
import { sourcePolicyFromEnvironment, type SourcePolicy } from './source-policy.js';
import { createEventWaiter } from './internal/event-waiter.js';
import { redactSecrets } from '@baton/core';
import {
  searchProject,
  type FeatureChecks,
  type OperatorGuidance,
  type SearchOptions,
  type SearchResult,
  type Transcript,
  type TranscriptSummary,
} from '@baton/session';
import { createRedisTranscripts } from './transcripts.js';
import {
  createRedisGuidance,
  operatorCancel,
  operatorPause,
  parseGuidanceText,
  type StoredGuidance,
} from './operator.js';
import { createKeys, DEFAULT_PREFIX, prefixProblem, type BatonKeys } from './keys.js';
import {
  PROJECT_TRANSITIONS,
  isTerminalStatus,
  checkProjectId,
  parseProjectInput,
  type ProjectRecord,
  type ProjectStatus,
  type StatusTransition,
} from './project.js';
import {
  ProjectRepository,
  type FeatureFlip,
  type ProjectChanges,
  type ProjectCounts,
  type ProjectPage,
  type ReadEventsOptions,
  type SessionSummary,
  type SessionWindow,
} from './project-repository.js';
import {
  followEventsRequestSchema,
  memoryHistoryRequestSchema,
  parseRequest,
  projectChangesRequestSchema,
  readEventsRequestSchema,
  searchOptionsRequestSchema,
  sessionWindowRequestSchema,
  waitForEventsRequestSchema,
} from './requests.js';
import { searchTextSchema, transcriptSessionIdSchema } from './control/session-requests.js';
import { PROJECT_PAGE_DEFAULT_LIMIT, parseProjectPageQuery } from './project-page.js';
import {
  closeRedisConnection,
  createRedisConnection,
  createRedisMemoryStore,
  describeRedisClient,
  describeRedisTarget,
  producerConnectionOptions,
  readRedisTarget,
  waitForRedis,
  type FileVersion,
  type RedisClient,
  type RedisMemoryStore,
  type RedisTarget,
} from '@baton/storage-redis';
import {
  createSessionQueue,
  enqueueSession,
  sessionJobId,
  type SessionJobData,
} from './session-queue.js';
import {
  createWebhookQueue,
  notifyStatusChange,
  type WebhookDeliveryRecord,
  type WebhookJobData,
} from './webhooks/webhook-delivery.js';

export type { BatonControlOptions } from './control/control-options.js';
export type {
  BatonControl,
  CancelResult,
  FollowEventsOptions,
  PauseResult,
  ProjectEvents,
  WaitForEventsOptions,
} from './control/control-api.js';

export function createBatonControl(options: BatonControlOptions = {}): BatonControl {
  return new RedisBatonControl(options);
}

/**
 * The control API on Redis. Each method parses its input once, with the request schemas of
 * requests.ts (one readable `invalid_input` line naming the field), waits for Redis, and then
 * reads or writes through the project repository.
 */
class RedisBatonControl implements BatonControl {
  readonly keys: BatonKeys;
  readonly #options: BatonControlOptions;
  readonly #target: RedisTarget;
  readonly #ownsRedis: boolean;
  readonly #redis: RedisClient;
  readonly #repository: ProjectRepository;
  readonly #waiter: ReturnType<typeof createEventWaiter>;
  /** Open follow connections, closed by `close()`. */
  readonly #followers = new Set<RedisClient>();
  #queue: Queue<SessionJobData> | undefined;
  #webhooks: Queue<WebhookJobData> | undefined;
  #readyPromise: Promise<void> | undefined;

  constructor(options: BatonControlOptions) {
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    const problem = prefixProblem(prefix, 'prefix');
    if (problem !== null) throw new ProjectError('invalid_config', problem);
    this.#options = options;
    this.#target =
      options.target ??
      (options.url !== undefined ? { kind: 'single', url: options.url } : readRedisTarget());
    this.#ownsRedis = options.redis === undefined;
    this.#redis =
      options.redis ??
      createRedisConnection(this.#target, {
        ...producerConnectionOptions(),
        connectTimeout: options.connectTimeoutMs ?? 5000,
      });
    // Failures surface as rejected calls; the event only needs a listener.
    this.#redis.on('error', () => undefined);
    this.keys = createKeys(prefix);
    // Status changes made here (cancel) are notified like the workers' own; workers deliver them.
    this.#repository = new ProjectRepository({
      redis: this.#redis,
      keys: this.keys,
      onStatusChange: (change) => {
        if (!this.#webhooks) {
          this.#webhooks = createWebhookQueue({ connection: this.#redis, prefix });
          this.#webhooks.on('error', () => undefined);
        }
        return notifyStatusChange(this.#webhooks, change);
      },
    });
    this.#waiter = createEventWaiter({
      redis: this.#redis,
      repository: this.#repository,
      graceMs: options.connectTimeoutMs ?? 5000,
    });
  }

  async createProject(
    input: unknown,
    createOptions?: { sourcePolicy?: SourcePolicy | undefined },
  ): Promise<ProjectRecord> {
    const parsed = parseProjectInput(input);
    const options = this.#options;
    const context = await projectContext(parsed, options);
    // Before anything reads the file system or the network for `repo` or `workspace`.
    const policy =
      createOptions?.sourcePolicy ??
      options.sourcePolicy ??
      sourcePolicyFromEnvironment(options.env ?? process.env, { served: false, home: '' });
    await policy.check(parsed, options.cwd ?? process.cwd());
    await this.#writable();
    if ((await this.#repository.get(parsed.id)) !== null) {
      throw new ProjectError('conflict', `project ${parsed.id} already exists`);
    }
    return this.#repository.create(await newProjectRecord(parsed, context, policy, options));
  }

  async enqueue(projectId: string): Promise<{ jobId: string; added: boolean }> {
    const project = await this.#projectToChange(projectId);
    if (project.status !== 'queued') {
      throw new ProjectError(
        'conflict',
        `project ${projectId} is ${project.status}; use resume to continue it`,
      );
    }
    return enqueueSession(this.#sessionQueue(), this.#repository, {
      projectId,
      sessionNumber: project.counters.sessions + 1,
      reason: 'enqueue',
      generation: project.createdAt,
    });
  }

  findStuck(project: ProjectRecord): Promise<StuckProject | null> {
    return findStuck({ redis: this.#redis, keys: this.keys, queue: this.#sessionQueue() }, project);
  }

  async findProblems(): Promise<ProjectProblems> {
    await this.#ready();
    return findProjectProblems({
      redis: this.#redis,
      keys: this.keys,
      queue: this.#sessionQueue(),
    });
  }

  readDeploymentMarker(): Promise<DeploymentMarker | null> {
    return readDeploymentMarker(this.#redis, this.keys);
  }

  async resume(
    projectId: string,
  ): Promise<{ project: ProjectRecord; jobId: string; added: boolean }> {
    const project = await this.#projectToChange(projectId);
    // A `running` project no worker holds (its job failed or vanished) is resumed like a paused one.
    const stuck = project.status === 'running' && (await this.findStuck(project)) !== null;
    if ((project.status === 'running' && !stuck) || project.status === 'completed') {
      throw new ProjectError('conflict', `project ${projectId} is ${project.status}`);
    }
    const moved = await this.#repository.transition(projectId, PROJECT_TRANSITIONS.resume.to, {
      from: stuck ? ['running'] : PROJECT_TRANSITIONS.resume.from,
      reason: 'resumed',
    });
    if (!moved.ok) {
      throw new ProjectError('conflict', `project ${projectId} is ${moved.current ?? 'gone'}`);
    }
    await this.#repository.resetFailures(projectId);
    const queued = await enqueueSession(this.#sessionQueue(), this.#repository, {
      projectId,
      sessionNumber: project.counters.sessions + 1,
      reason: 'resume',
      generation: project.createdAt,
    });
    return { project: await this.#repository.require(projectId), ...queued };
  }

  async cancel(projectId: string): Promise<CancelResult> {
    const project = await this.#projectToChange(projectId);
    return operatorCancel(this.#repository, project, async (cancelled) => {
      // Tell whichever worker runs it; workers also notice the status on their next lease renewal.
      await this.#redis.publish(this.keys.cancelChannel, projectId);
      const jobId = sessionJobId(projectId, cancelled.counters.sessions + 1);
      const removed = await this.#sessionQueue()
        .remove(jobId)
        .catch(() => 0);
      return removed === 1 ? jobId : null;
    });
  }

  async pause(projectId: string): Promise<PauseResult> {
    const project = await this.#projectToChange(projectId);
    return operatorPause(this.#repository, project, async (from, paused) => {
      // Whichever worker runs it closes the session; workers also see the status on renewal.
      await this.#redis.publish(this.keys.pauseChannel, projectId);
      if (from !== 'queued') return null;
      const jobId = sessionJobId(projectId, paused.counters.sessions + 1);
      const removed = await this.#sessionQueue()
        .remove(jobId)
        .catch(() => 0);
      return removed === 1 ? jobId : null;
    });
  }

  async say(
    projectId: string,
    text: string,
  ): Promise<{ guidance: OperatorGuidance; project: ProjectRecord }> {
    checkProjectId(projectId);
    const valid = parseGuidanceText(text);
    const project = await this.#projectToChange(projectId);
    if (isTerminalStatus(project.status)) {
      throw new ProjectError(
        'conflict',
        `project ${projectId} is ${project.status}; guidance reaches only a queued, running or paused project`,
      );
    }
    const guidance = await this.#guidance(projectId).add(valid);
    await this.#repository.appendEvent(projectId, {
      v: 1,
      type: 'guidance-sent',
      at: guidance.at,
      projectId,
      guidanceId: guidance.id,
      // Events are shown on dashboards and in logs: no secret pasted by mistake goes there.
      text: redactSecrets(guidance.text).text,
      runningSessionId: project.activeSession?.sessionId ?? null,
    });
    return { guidance, project };
  }

  async listGuidance(projectId: string): Promise<StoredGuidance[]> {
    await this.#project(projectId);
    return this.#guidance(projectId).list();
  }

  async getProject(projectId: string): Promise<ProjectRecord | null> {
    await this.#project(projectId);
    return this.#repository.get(projectId);
  }

  async findFragment(projectId: string): Promise<string[] | null> {
    await this.#project(projectId);
    return this.#repository.fragment(projectId);
  }

  async listProjects(
    listOptions: { status?: ProjectStatus | undefined } = {},
  ): Promise<ProjectRecord[]> {
    await this.#ready();
    return this.#repository.list(listOptions);
  }

  async pageProjects(query: unknown = {}): Promise<ProjectPage> {
    const parsed = parseProjectPageQuery(query);
    await this.#ready();
    return this.#repository.page({ limit: PROJECT_PAGE_DEFAULT_LIMIT, ...parsed });
  }

  async countProjects(): Promise<ProjectCounts> {
    await this.#ready();
    return this.#repository.counts();
  }

  async projectChanges(
    version: number,
    changeOptions: { limit?: number } = {},
  ): Promise<ProjectChanges> {
    const request = parseRequest(
      projectChangesRequestSchema,
      { ...changeOptions, version },
      'change feed read',
    );
    await this.#ready();
    return this.#repository.changesSince(request.version, request.limit);
  }

  async projectChangeVersion(): Promise<number> {
    await this.#ready();
    return this.#repository.changeVersion();
  }

  async listSessions(projectId: string): Promise<SessionSummary[]> {
    await this.#project(projectId);
    return this.#repository.listSessions(projectId);
  }

  async featureFlips(projectId: string): Promise<Map<string, FeatureFlip>> {
    await this.#project(projectId);
    return this.#repository.featureFlips(projectId);
  }

  async readChecks(projectId: string): Promise<FeatureChecks> {
    await this.#project(projectId);
    return this.#repository.readChecks(projectId);
  }

  async pageSessions(
    projectId: string,
    pageOptions: { limit?: number; beforeIndex?: number } = {},
  ): Promise<SessionWindow> {
    checkProjectId(projectId);
    const window = parseRequest(sessionWindowRequestSchema, pageOptions, 'session window');
    await this.#ready();
    return this.#repository.sessionWindow(projectId, window);
  }

  async listTransitions(projectId: string): Promise<StatusTransition[]> {
    await this.#project(projectId);
    return this.#repository.transitions(projectId);
  }

  async readEvents(projectId: string, readOptions: ReadEventsOptions = {}): Promise<EventEntry[]> {
    checkProjectId(projectId);
    const read = parseRequest(readEventsRequestSchema, readOptions, 'event read');
    await this.#ready();
    return readProjectEvents(this.#redis, this.#repository, projectId, read);
  }

  followEvents(
    projectId: string,
    followOptions: FollowEventsOptions = {},
  ): AsyncIterable<EventEntry> {
    checkProjectId(projectId);
    const follow = parseRequest(followEventsRequestSchema, followOptions, 'event follow');
    return followProjectEvents(
      {
        redis: this.#redis,
        keys: this.keys,
        repository: this.#repository,
        followers: this.#followers,
        ready: () => this.#ready(),
      },
      projectId,
      follow,
    );
  }

  async waitForEvents(
    cursors: Record<string, string>,
    waitOptions: WaitForEventsOptions,
  ): Promise<ProjectEvents[]> {
    const wait = parseRequest(
      waitForEventsRequestSchema,
      { ...waitOptions, cursors },
      'event wait',
    );
    if (Object.keys(cursors).length === 0) return [];
    await this.#ready();
    return this.#waiter.wait(cursors, wait);
  }

  async listTranscripts(projectId: string): Promise<TranscriptSummary[]> {
    await this.#project(projectId);
    return this.#transcripts(projectId).list();
  }

  async readTranscript(projectId: string, sessionId: string): Promise<Transcript | null> {
    checkProjectId(projectId);
    parseRequest(transcriptSessionIdSchema, sessionId, 'session id');
    await this.#ready();
    return this.#transcripts(projectId).read(sessionId);
  }

  async search(
    projectId: string,
    text: string,
    searchOptions: SearchOptions = {},
  ): Promise<SearchResult> {
    const query = parseRequest(searchTextSchema, text, 'search text');
    const options = parseRequest(searchOptionsRequestSchema, searchOptions, 'search options');
    await this.#project(projectId);
    await this.#repository.require(projectId);
    const memory = this.#memory(projectId);
    try {
      return await searchProject(
        { transcripts: this.#transcripts(projectId), memory },
        query,
        options,
      );
    } finally {
      await memory.close();
    }
  }

  async memoryStore(projectId: string): Promise<RedisMemoryStore> {
    await this.#project(projectId);
    return this.#memory(projectId);
  }

  async memoryHistory(
    projectId: string,
    path: string,
    historyOptions: { limit?: number } = {},
  ): Promise<FileVersion[]> {
    const { limit } = parseRequest(memoryHistoryRequestSchema, historyOptions, 'history read');
    await this.#project(projectId);
    const versions = await this.#memory(projectId).listHistory(path);
    return limit === undefined ? versions : versions.slice(0, limit);
  }

  async listWebhookDeliveries(projectId: string): Promise<WebhookDeliveryRecord[]> {
    await this.#project(projectId);
    return this.#repository.listWebhookDeliveries(projectId);
  }

  async queueCounts(): Promise<Record<string, number>> {
    await this.#ready();
    return this.#sessionQueue().getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
  }

  async deleteProject(projectId: string): Promise<void> {
    checkProjectId(projectId);
    await this.#writable();
    await this.#memory(projectId).clear();
    await this.#repository.delete(projectId);
  }

  async close(): Promise<void> {
    for (const follower of this.#followers) closeRedisConnection(follower);
    this.#followers.clear();
    this.#waiter.close();
    if (this.#queue) await this.#queue.close().catch(() => undefined);
    if (this.#webhooks) await this.#webhooks.close().catch(() => undefined);
    if (this.#ownsRedis) closeRedisConnection(this.#redis);
  }

  /** Waits for Redis once per connection; `redis_unreachable` names where it looked. */
  async #ready(): Promise<void> {
    this.#readyPromise ??= waitForRedis(this.#redis, this.#options.connectTimeoutMs ?? 5000).catch(
      (error: unknown) => {
        this.#readyPromise = undefined;
        const where = this.#ownsRedis
          ? describeRedisTarget(this.#target)
          : describeRedisClient(this.#redis);
        throw new ProjectError(
          'redis_unreachable',
          `cannot reach Redis at ${where}: ${describeError(error)}`,
          { cause: error },
        );
      },
    );
    await this.#readyPromise;
  }

  /** A project id checked by the one id rule, then Redis ready. */
  async #project(projectId: string): Promise<void> {
    checkProjectId(projectId);
    await this.#ready();
  }

  /** The project, for a write: Redis ready and no data migration pending (`#writable`). */
  async #projectToChange(projectId: string): Promise<ProjectRecord> {
    checkProjectId(projectId);
    await this.#writable();
    return this.#repository.require(projectId);
  }

  /**
   * Redis ready, and its data in the shape this version writes: a write on data an earlier
   * Baton stored, before a worker migrated it, is refused in one line (`migration_pending`).
   */
  async #writable(): Promise<void> {
    await this.#ready();
    await requireMigratedData(this.#redis, this.keys);
  }

  #sessionQueue(): Queue<SessionJobData> {
    if (!this.#queue) {
      this.#queue = createSessionQueue({ connection: this.#redis, keys: this.keys });
      // Failures surface as rejected calls; the event only needs a listener.
      this.#queue.on('error', () => undefined);
    }
    return this.#queue;
  }

  #memory(projectId: string): RedisMemoryStore {
    return createRedisMemoryStore({
      redis: this.#redis,
      namespace: projectId,
      // Derived from the prefix, as the workers' are: a deployment's memory is its own.
      prefix: this.keys.memoryPrefix,
    });
  }

  #transcripts(projectId: string) {
    return createRedisTranscripts({ redis: this.#redis, keys: this.keys, projectId });
  }

  #guidance(projectId: string) {
    return createRedisGuidance({ redis: this.#redis, keys: this.keys, projectId });
  }
}
