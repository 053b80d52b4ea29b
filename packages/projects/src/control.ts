import { createRedisMemoryStore, type RedisMemoryStore } from '@baton/storage-redis';
import type { Queue } from 'bullmq';
import type { BatonControl } from './control/control-api.js';
import { ProjectError, describeError } from './errors.js';
import { newProjectRecord, projectContext } from './control/new-project.js';
import {
  checkReadEventsOptions,
  checkWaitArguments,
  followProjectEvents,
} from './control/event-reads.js';
import { findStuck } from './reconcile.js';
import { readDeploymentMarker } from './redis-safety.js';
import { sourcePolicyFromEnvironment, type SourcePolicy } from './source-policy.js';
import { createEventWaiter } from './internal/event-waiter.js';
import { redactSecrets } from '@baton/core';
import { isTranscriptSessionId, searchProject, searchTextProblem } from '@baton/session';
import { createRedisTranscripts } from './transcripts.js';
import { OPERATOR_PAUSE_REASON } from './chaining.js';
import { createRedisGuidance, parseGuidanceText } from './operator.js';
import { createKeys, DEFAULT_PREFIX, isValidPrefix } from './keys.js';
import {
  PROJECT_TRANSITIONS,
  isTerminalStatus,
  checkProjectId,
  parseProjectInput,
  type ProjectRecord,
} from './project.js';
import { ProjectRepository } from './project-repository.js';
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

export type {
  BatonControl,
  CancelResult,
  FollowEventsOptions,
  PauseResult,
  ProjectEvents,
  WaitForEventsOptions,
} from './control/control-api.js';

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

  const checkId = checkProjectId;

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
      return repository.create(await newProjectRecord(parsed, context, policy, options));
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

    async findFragment(projectId) {
      checkId(projectId);
      await ready();
      return repository.fragment(projectId);
    },

    async listProjects(listOptions = {}) {
      await ready();
      return repository.list(listOptions);
    },

    async pageProjects(query = {}) {
      const parsed = parseProjectPageQuery(query);
      await ready();
      return repository.page({ limit: PROJECT_PAGE_DEFAULT_LIMIT, ...parsed });
    },

    async countProjects() {
      await ready();
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
      checkReadEventsOptions(readOptions);
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
      return followProjectEvents(
        { redis, keys, repository, followers, ready },
        projectId,
        followOptions,
      );
    },

    async waitForEvents(cursors, waitOptions) {
      checkWaitArguments(cursors, waitOptions);
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

function describeClient(redis: RedisClient): string {
  if (isCluster(redis)) return 'the Redis cluster';
  const { host, port, db } = redis.options;
  return `redis://${host ?? '127.0.0.1'}:${port ?? 6379}/${db ?? 0}`;
}
