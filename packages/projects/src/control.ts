import {
  ContextConfigError,
  DEFAULT_CONTEXT_PRESET,
  loadContextConfigInput,
  type ContextConfigInput,
} from '@baton/context-config';
import {
  createRedisMemoryStore,
  type FileVersion,
  type RedisMemoryStore,
} from '@baton/storage-redis';
import type { Queue } from 'bullmq';
import {
  WorkspaceError,
  checkWorkspaceDir,
  projectBranch,
  resolveProjectSource,
} from '@baton/workspace';
import { ProjectError, describeError } from './errors.js';
import { findStuck, type StuckProject } from './reconcile.js';
import { readDeploymentMarker, type DeploymentMarker } from './redis-safety.js';
import { sourcePolicyFromEnvironment, type SourcePolicy } from './source-policy.js';
import type { EventEntry } from './events.js';
import {
  createEventWaiter,
  type ProjectEvents,
  type WaitForEventsOptions,
} from './internal/event-waiter.js';
import { redactSecrets } from '@baton/core';
import {
  isTranscriptSessionId,
  searchProject,
  searchTextProblem,
  type FeatureChecks,
  type OperatorGuidance,
  type SearchOptions,
  type SearchResult,
  type Transcript,
  type TranscriptSummary,
} from '@baton/session';
import { createRedisTranscripts } from './transcripts.js';
import { OPERATOR_PAUSE_REASON } from './chaining.js';
import { createRedisGuidance, parseGuidanceText, type StoredGuidance } from './operator.js';
import { createKeys, DEFAULT_PREFIX, isValidPrefix, type BatonKeys } from './keys.js';
import {
  PROJECT_TRANSITIONS,
  isTerminalStatus,
  isValidProjectId,
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
import { PROJECT_PAGE_DEFAULT_LIMIT, parseProjectPageQuery } from './project-page.js';
import {
  createRedisConnection,
  describeRedisTarget,
  duplicateConnection,
  isCluster,
  producerConnectionOptions,
  readRedisTarget,
  waitForRedis,
  type RedisClient,
  type RedisTarget,
} from './redis-connection.js';
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

export interface BatonControlOptions {
  /** An existing ioredis client (not closed by `close()`). Give this, `target` or `url`. */
  redis?: RedisClient;
  /** Where Redis is; default `readRedisTarget()` (`REDIS_CLUSTER_NODES`, `REDIS_URL`). */
  target?: RedisTarget;
  /** Redis URL of one node; shorthand for `target: parseRedisUrl(url)`. */
  url?: string;
  /** Key prefix with a hash tag; must match the workers'. Default `{baton}`. */
  prefix?: string;
  /** Prefix of memory keys (`@baton/storage-redis`); must match the workers'. Default theirs. */
  memoryPrefix?: string;
  /**
   * Where `createProject` runs: relative `repo` paths are resolved against this directory, and
   * its `baton.config.json` gives new projects their context config. Default `process.cwd()`.
   */
  cwd?: string;
  /** Environment `createProject` reads `BATON_CONTEXT_*` from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Longest wait for a project's repository to answer at creation (ms). Default 60_000. */
  repoTimeoutMs?: number;
  /**
   * Which `repo` and `workspace` a new project may name (source-policy.ts). Default:
   * `BATON_REPO_HOSTS`, `BATON_REPO_ROOTS`, `BATON_WORKSPACE_ROOT` of `env`, open where unset.
   */
  sourcePolicy?: SourcePolicy | undefined;
  /** How long to wait for Redis before failing with `redis_unreachable` (ms). Default 5000. */
  connectTimeoutMs?: number;
}

export interface FollowEventsOptions {
  /** Start after this stream id; default `0-0` (the whole retained history). Use `$` for new events only. */
  fromId?: string;
  /** Entries fetched per call. Default 100. */
  count?: number;
  /** Longest single XREAD BLOCK (ms). Default 5000. */
  blockMs?: number;
  /** Stops the iteration. */
  signal?: AbortSignal;
}

export type { ProjectEvents, WaitForEventsOptions };

/** A stream id as XREAD takes it after a cursor (`<ms>-<seq>`). */
const STREAM_ID_PATTERN = /^\d{1,20}-\d{1,20}$/;

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
  /** Every project (oldest first): the CLI's listing. A fleet view pages with `pageProjects`. */
  listProjects(options?: { status?: ProjectStatus }): Promise<ProjectRecord[]>;
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
    options?: { limit?: number; beforeIndex?: number },
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

export function createBatonControl(options: BatonControlOptions = {}): BatonControl {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (!isValidPrefix(prefix)) {
    throw new ProjectError('invalid_config', `prefix must contain one {hash tag}, got "${prefix}"`);
  }
  const target: RedisTarget =
    options.target ??
    (options.url !== undefined ? { kind: 'single', url: options.url } : readRedisTarget());
  const ownsRedis = options.redis === undefined;
  const redis =
    options.redis ??
    createRedisConnection(target, {
      ...producerConnectionOptions(),
      connectTimeout: options.connectTimeoutMs ?? 5000,
    });
  // Failures surface as rejected calls; the event only needs a listener.
  redis.on('error', () => undefined);
  const keys = createKeys(prefix);
  let webhooks: Queue<WebhookJobData> | undefined;
  // Status changes made here (cancel) are notified like the workers' own; workers deliver them.
  const repository = new ProjectRepository({
    redis,
    keys,
    onStatusChange: (change) => {
      if (!webhooks) {
        webhooks = createWebhookQueue({ connection: redis, prefix });
        webhooks.on('error', () => undefined);
      }
      return notifyStatusChange(webhooks, change);
    },
  });
  let queue: Queue<SessionJobData> | undefined;
  const followers = new Set<RedisClient>();
  const waiter = createEventWaiter({
    redis,
    repository,
    graceMs: options.connectTimeoutMs ?? 5000,
  });

  let indexedPromise: Promise<void> | undefined;
  /** Projects stored before the index existed are added once, by the first page read. */
  async function indexed(): Promise<void> {
    indexedPromise ??= repository.ensureIndexed().catch((error: unknown) => {
      indexedPromise = undefined;
      throw error;
    });
    await indexedPromise;
  }

  let readyPromise: Promise<void> | undefined;
  async function ready(): Promise<void> {
    readyPromise ??= waitForRedis(redis, options.connectTimeoutMs ?? 5000).catch((error) => {
      readyPromise = undefined;
      throw new ProjectError(
        'redis_unreachable',
        `cannot reach Redis at ${ownsRedis ? describeRedisTarget(target) : describeClient(redis)}: ${describeError(error)}`,
        { cause: error },
      );
    });
    await readyPromise;
  }

  function sessionQueue(): Queue<SessionJobData> {
    if (!queue) {
      queue = createSessionQueue({ connection: redis, keys });
      // Failures surface as rejected calls; the event only needs a listener.
      queue.on('error', () => undefined);
    }
    return queue;
  }

  function checkId(projectId: string): void {
    if (!isValidProjectId(projectId)) {
      throw new ProjectError('invalid_input', `invalid project id ${JSON.stringify(projectId)}`);
    }
  }

  function openMemory(projectId: string): RedisMemoryStore {
    return createRedisMemoryStore({
      redis,
      namespace: projectId,
      ...(options.memoryPrefix !== undefined ? { prefix: options.memoryPrefix } : {}),
    });
  }

  async function requireProject(projectId: string): Promise<ProjectRecord> {
    checkId(projectId);
    await ready();
    return repository.require(projectId);
  }

  return {
    keys,

    async createProject(input, createOptions) {
      const parsed = parseProjectInput(input);
      const context = await projectContext(parsed, options);
      // Before anything reads the file system or the network for `repo` or `workspace`.
      const policy =
        createOptions?.sourcePolicy ??
        options.sourcePolicy ??
        sourcePolicyFromEnvironment(options.env ?? process.env, { served: false, home: '' });
      await policy.check(parsed, options.cwd ?? process.cwd());
      await ready();
      if ((await repository.get(parsed.id)) !== null) {
        throw new ProjectError('conflict', `project ${parsed.id} already exists`);
      }
      let source = null;
      if (parsed.workspace !== undefined) {
        try {
          await checkWorkspaceDir(parsed.workspace, { adopt: parsed.adoptWorkspace === true });
        } catch (error) {
          if (error instanceof WorkspaceError) {
            throw new ProjectError('invalid_input', error.message, { cause: error });
          }
          throw error;
        }
      }
      if (parsed.repo !== undefined) {
        try {
          source = await resolveProjectSource({
            repo: parsed.repo,
            ...(parsed.base === undefined ? {} : { base: parsed.base }),
            projectId: parsed.id,
            ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
            ...(options.repoTimeoutMs === undefined ? {} : { timeoutMs: options.repoTimeoutMs }),
          });
        } catch (error) {
          if (error instanceof WorkspaceError) {
            throw new ProjectError(
              'invalid_input',
              policy.describeRepoFailure(parsed.repo, error),
              {
                cause: error,
              },
            );
          }
          throw error;
        }
      }
      return repository.create({
        id: parsed.id,
        goal: parsed.goal,
        workspace: parsed.workspace ?? null,
        repo: source?.repo ?? null,
        base: source?.base ?? null,
        baseCommit: source?.baseCommit ?? null,
        branch: projectBranch(parsed.id),
        skipHooks: parsed.skipHooks === true,
        lastCheckpoint: source?.existingHead ?? null,
        model: parsed.model ?? null,
        fallbackModel: parsed.fallbackModel ?? null,
        budgets: parsed.budgets ?? {},
        contextPreset: context.preset ?? DEFAULT_CONTEXT_PRESET,
        context,
        sandbox: parsed.sandbox ?? null,
        verification: parsed.verification ?? null,
        createdAt: Date.now(),
      });
    },

    async enqueue(projectId) {
      const project = await requireProject(projectId);
      if (project.status !== 'queued') {
        throw new ProjectError(
          'conflict',
          `project ${projectId} is ${project.status}; use resume to continue it`,
        );
      }
      return enqueueSession(sessionQueue(), repository, {
        projectId,
        sessionNumber: project.counters.sessions + 1,
        reason: 'enqueue',
      });
    },

    findStuck: (project) => findStuck({ redis, keys, queue: sessionQueue() }, project),

    readDeploymentMarker: () => readDeploymentMarker(redis, keys),

    async resume(projectId) {
      const project = await requireProject(projectId);
      // A `running` project no worker holds (its job failed or vanished) is resumed like a paused one.
      const stuck =
        project.status === 'running' &&
        (await findStuck({ redis, keys, queue: sessionQueue() }, project)) !== null;
      if ((project.status === 'running' && !stuck) || project.status === 'completed') {
        throw new ProjectError('conflict', `project ${projectId} is ${project.status}`);
      }
      const moved = await repository.transition(projectId, PROJECT_TRANSITIONS.resume.to, {
        from: stuck ? ['running'] : PROJECT_TRANSITIONS.resume.from,
        reason: 'resumed',
      });
      if (!moved.ok) {
        throw new ProjectError('conflict', `project ${projectId} is ${moved.current ?? 'gone'}`);
      }
      await repository.resetFailures(projectId);
      const queued = await enqueueSession(sessionQueue(), repository, {
        projectId,
        sessionNumber: project.counters.sessions + 1,
        reason: 'resume',
      });
      return { project: await repository.require(projectId), ...queued };
    },

    async cancel(projectId) {
      const project = await requireProject(projectId);
      if (project.status === 'completed') {
        throw new ProjectError('conflict', `project ${projectId} is already completed`);
      }
      if (project.status !== 'cancelled') {
        const moved = await repository.transition(projectId, PROJECT_TRANSITIONS.cancel.to, {
          from: PROJECT_TRANSITIONS.cancel.from,
          reason: 'cancelled by user',
        });
        if (!moved.ok && moved.current !== 'cancelled') {
          throw new ProjectError('conflict', `project ${projectId} is ${moved.current ?? 'gone'}`);
        }
      }
      // Tell whichever worker runs it; workers also notice the status on their next lease renewal.
      await redis.publish(keys.cancelChannel, projectId);
      const jobId = sessionJobId(projectId, project.counters.sessions + 1);
      const removed = await sessionQueue()
        .remove(jobId)
        .catch(() => 0);
      return {
        project: await repository.require(projectId),
        removedJobId: removed === 1 ? jobId : null,
      };
    },

    async pause(projectId) {
      const project = await requireProject(projectId);
      if (project.status === 'paused') {
        return { project, removedJobId: null, runningSessionId: null, changed: false };
      }
      const moved = await repository.transition(projectId, PROJECT_TRANSITIONS.pause.to, {
        from: PROJECT_TRANSITIONS.pause.from,
        reason: OPERATOR_PAUSE_REASON,
      });
      if (!moved.ok) {
        throw new ProjectError(
          'conflict',
          `project ${projectId} is ${moved.current ?? 'gone'}; only a queued or running project can be paused`,
        );
      }
      const current = await repository.require(projectId);
      const runningSessionId = current.activeSession?.sessionId ?? null;
      // Whichever worker runs it closes the session; workers also see the status on renewal.
      await redis.publish(keys.pauseChannel, projectId);
      const jobId = sessionJobId(projectId, current.counters.sessions + 1);
      const removed =
        moved.from === 'queued'
          ? await sessionQueue()
              .remove(jobId)
              .catch(() => 0)
          : 0;
      const removedJobId = removed === 1 ? jobId : null;
      await repository.appendEvent(projectId, {
        v: 1,
        type: 'project-paused',
        at: Date.now(),
        projectId,
        by: 'operator',
        runningSessionId,
        removedJobId,
      });
      return { project: current, removedJobId, runningSessionId, changed: true };
    },

    async say(projectId, text) {
      checkId(projectId);
      const valid = parseGuidanceText(text);
      const project = await requireProject(projectId);
      if (isTerminalStatus(project.status)) {
        throw new ProjectError(
          'conflict',
          `project ${projectId} is ${project.status}; guidance reaches only a queued, running or paused project`,
        );
      }
      const guidance = await createRedisGuidance({ redis, keys, projectId }).add(valid);
      await repository.appendEvent(projectId, {
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
    },

    async listGuidance(projectId) {
      checkId(projectId);
      await ready();
      return createRedisGuidance({ redis, keys, projectId }).list();
    },

    async getProject(projectId) {
      checkId(projectId);
      await ready();
      return repository.get(projectId);
    },

    async listProjects(listOptions = {}) {
      await ready();
      return repository.list(listOptions);
    },

    async pageProjects(query = {}) {
      const parsed = parseProjectPageQuery(query);
      await ready();
      await indexed();
      return repository.page({ limit: PROJECT_PAGE_DEFAULT_LIMIT, ...parsed });
    },

    async countProjects() {
      await ready();
      await indexed();
      return repository.counts();
    },

    async projectChanges(version, changeOptions = {}) {
      if (!Number.isSafeInteger(version) || version < 0) {
        throw new ProjectError('invalid_input', `version must be an integer >= 0, got ${version}`);
      }
      const limit = changeOptions.limit ?? 500;
      if (!Number.isSafeInteger(limit) || limit < 1) {
        throw new ProjectError('invalid_input', `limit must be an integer >= 1, got ${limit}`);
      }
      await ready();
      return repository.changesSince(version, limit);
    },

    async projectChangeVersion() {
      await ready();
      return repository.changeVersion();
    },

    async listSessions(projectId) {
      checkId(projectId);
      await ready();
      return repository.listSessions(projectId);
    },

    async featureFlips(projectId) {
      checkId(projectId);
      await ready();
      return repository.featureFlips(projectId);
    },

    async readChecks(projectId) {
      checkId(projectId);
      await ready();
      return repository.readChecks(projectId);
    },

    async pageSessions(projectId, pageOptions = {}) {
      checkId(projectId);
      const limit = pageOptions.limit ?? 50;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1_000) {
        throw new ProjectError('invalid_input', `limit must be an integer 1-1000, got ${limit}`);
      }
      const before = pageOptions.beforeIndex;
      if (before !== undefined && (!Number.isSafeInteger(before) || before < 0)) {
        throw new ProjectError(
          'invalid_input',
          `beforeIndex must be an integer >= 0, got ${before}`,
        );
      }
      await ready();
      return repository.sessionWindow(projectId, {
        limit,
        ...(before === undefined ? {} : { beforeIndex: before }),
      });
    },

    async listTransitions(projectId) {
      checkId(projectId);
      await ready();
      return repository.transitions(projectId);
    },

    async readEvents(projectId, readOptions = {}) {
      checkId(projectId);
      if (readOptions.last !== undefined) {
        if (!Number.isSafeInteger(readOptions.last) || readOptions.last < 1) {
          throw new ProjectError(
            'invalid_input',
            `last must be an integer >= 1, got ${readOptions.last}`,
          );
        }
        if (readOptions.fromId !== undefined || readOptions.blockMs !== undefined) {
          throw new ProjectError(
            'invalid_input',
            'last reads backwards: give no fromId or blockMs',
          );
        }
      }
      if (readOptions.beforeId !== undefined) {
        if (readOptions.last === undefined) {
          throw new ProjectError('invalid_input', 'beforeId pages backwards: give last with it');
        }
        if (!STREAM_ID_PATTERN.test(readOptions.beforeId)) {
          throw new ProjectError(
            'invalid_input',
            `invalid stream id ${JSON.stringify(readOptions.beforeId)}`,
          );
        }
      }
      await ready();
      if (readOptions.blockMs !== undefined) {
        // A blocking read must not hold the shared connection.
        const blocking = duplicateConnection(redis, {
          maxRetriesPerRequest: null,
          enableOfflineQueue: true,
        });
        blocking.on('error', () => undefined);
        try {
          return await repository.readEvents(projectId, readOptions, blocking);
        } finally {
          blocking.disconnect();
        }
      }
      return repository.readEvents(projectId, readOptions);
    },

    followEvents(projectId, followOptions = {}) {
      checkId(projectId);
      return {
        async *[Symbol.asyncIterator]() {
          await ready();
          const blocking = duplicateConnection(redis, {
            maxRetriesPerRequest: null,
            enableOfflineQueue: true,
          });
          blocking.on('error', () => undefined);
          followers.add(blocking);
          const signal = followOptions.signal;
          const stop = () => blocking.disconnect();
          signal?.addEventListener('abort', stop, { once: true });
          let fromId = followOptions.fromId ?? '0-0';
          try {
            if (fromId === '$') {
              const last = (await redis.xrevrange(
                keys.events(projectId),
                '+',
                '-',
                'COUNT',
                1,
              )) as [string, string[]][];
              fromId = last[0]?.[0] ?? '0-0';
            }
            while (!signal?.aborted) {
              let entries: EventEntry[];
              try {
                entries = await repository.readEvents(
                  projectId,
                  {
                    fromId,
                    count: followOptions.count ?? 100,
                    blockMs: followOptions.blockMs ?? 5000,
                  },
                  blocking,
                );
              } catch (error) {
                if (signal?.aborted) return;
                throw error;
              }
              for (const entry of entries) {
                fromId = entry.id;
                yield entry;
              }
            }
          } finally {
            signal?.removeEventListener('abort', stop);
            followers.delete(blocking);
            blocking.disconnect();
          }
        },
      };
    },

    async waitForEvents(cursors, waitOptions) {
      for (const [projectId, cursor] of Object.entries(cursors)) {
        checkId(projectId);
        if (typeof cursor !== 'string' || !STREAM_ID_PATTERN.test(cursor)) {
          throw new ProjectError(
            'invalid_input',
            `invalid stream id ${JSON.stringify(cursor)} for project ${projectId}`,
          );
        }
      }
      const { blockMs, count } = waitOptions;
      if (!Number.isSafeInteger(blockMs) || blockMs < 0) {
        throw new ProjectError('invalid_input', `blockMs must be an integer >= 0, got ${blockMs}`);
      }
      if (count !== undefined && (!Number.isSafeInteger(count) || count < 1)) {
        throw new ProjectError('invalid_input', `count must be an integer >= 1, got ${count}`);
      }
      if (Object.keys(cursors).length === 0) return [];
      await ready();
      return waiter.wait(cursors, waitOptions);
    },

    async listTranscripts(projectId) {
      checkId(projectId);
      await ready();
      return createRedisTranscripts({ redis, keys, projectId }).list();
    },

    async readTranscript(projectId, sessionId) {
      checkId(projectId);
      if (!isTranscriptSessionId(sessionId)) {
        throw new ProjectError('invalid_input', `invalid session id ${JSON.stringify(sessionId)}`);
      }
      await ready();
      return createRedisTranscripts({ redis, keys, projectId }).read(sessionId);
    },

    async search(projectId, text, searchOptions = {}) {
      const problem = searchTextProblem(text);
      if (problem !== null) throw new ProjectError('invalid_input', `search text ${problem}`);
      await requireProject(projectId);
      const memory = createRedisMemoryStore({
        redis,
        namespace: projectId,
        ...(options.memoryPrefix !== undefined ? { prefix: options.memoryPrefix } : {}),
      });
      try {
        return await searchProject(
          { transcripts: createRedisTranscripts({ redis, keys, projectId }), memory },
          text.trim(),
          searchOptions,
        );
      } finally {
        await memory.close();
      }
    },

    async memoryStore(projectId) {
      checkId(projectId);
      await ready();
      return openMemory(projectId);
    },

    async memoryHistory(projectId, path, historyOptions = {}) {
      const { limit } = historyOptions;
      if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
        throw new ProjectError('invalid_input', `limit must be an integer >= 1, got ${limit}`);
      }
      checkId(projectId);
      await ready();
      const versions = await openMemory(projectId).listHistory(path);
      return limit === undefined ? versions : versions.slice(0, limit);
    },

    async listWebhookDeliveries(projectId) {
      checkId(projectId);
      await ready();
      return repository.listWebhookDeliveries(projectId);
    },

    async queueCounts() {
      await ready();
      return sessionQueue().getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
    },

    async deleteProject(projectId) {
      checkId(projectId);
      await ready();
      const store = createRedisMemoryStore({
        redis,
        namespace: projectId,
        ...(options.memoryPrefix !== undefined ? { prefix: options.memoryPrefix } : {}),
      });
      await store.clear();
      await repository.delete(projectId);
    },

    async close() {
      for (const follower of followers) follower.disconnect();
      followers.clear();
      waiter.close();
      if (queue) await queue.close().catch(() => undefined);
      if (webhooks) await webhooks.close().catch(() => undefined);
      if (ownsRedis) redis.disconnect();
    },
  };
}

/** The context config a new project stores: the creator's file and env, under the input's own. */
async function projectContext(
  input: { context?: ContextConfigInput; contextPreset?: ContextConfigInput['preset'] },
  options: BatonControlOptions,
): Promise<ContextConfigInput> {
  const override: ContextConfigInput = {
    ...input.context,
    ...(input.contextPreset === undefined ? {} : { preset: input.contextPreset }),
  };
  let loaded: ContextConfigInput;
  try {
    loaded = await loadContextConfigInput({
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
      ...(Object.keys(override).length === 0 ? {} : { override }),
    });
  } catch (error) {
    if (!(error instanceof ContextConfigError)) throw error;
    throw new ProjectError(
      'invalid_input',
      `invalid context config: ${error.issues.map((issue) => `${issue.source === 'override' ? 'context' : issue.source}: ${issue.path}: ${issue.message}`).join('; ')}`,
      { cause: error },
    );
  }
  // The preset is written out so the record says what it runs without knowing the default.
  return { preset: loaded.preset ?? DEFAULT_CONTEXT_PRESET, ...loaded };
}

function describeClient(redis: RedisClient): string {
  if (isCluster(redis)) return 'the Redis cluster';
  const { host, port, db } = redis.options;
  return `redis://${host ?? '127.0.0.1'}:${port ?? 6379}/${db ?? 0}`;
}
