import { Queue, Worker, type Job } from 'bullmq';
import {
  MAINTENANCE_QUEUE_NAME,
  ProjectRepository,
  SESSION_QUEUE_NAME,
  createKeys,
  createSessionQueue,
  createWebhookQueue,
  createWebhookWorker,
  notifyFeatureRegressed,
  notifyStatusChange,
  reconcileProjects,
  webhookProjectSnapshot,
  type BatonKeys,
  type RedisClient,
  type SessionJobData,
} from '@baton/projects';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js';
import {
  createSessionProcessor,
  type RunningSession,
  type SessionJobResult,
  type SessionProcessorOptions,
} from './processor.js';

/** Maintenance work run by BullMQ job schedulers (any one worker runs each occurrence). */
export interface MaintenanceOptions {
  /** Memory expiry sweep period in ms; 0 = no sweep. */
  memorySweepEveryMs: number;
  /** Runs one sweep over every project's memory. */
  sweepMemory?: () => Promise<{ removed: number }>;
  /** Finished jobs older than this are removed (ms). */
  jobRetentionMs: number;
  /** How often the retention job runs (ms). Default one hour. */
  retentionEveryMs?: number;
  /**
   * How often the reconciler looks for `queued`/`running` projects with no job and no lease and
   * queues them again (ms). Default 30 000.
   */
  reconcileEveryMs?: number | undefined;
  /** How old such a project's status must be before it counts as stuck (ms). Default 30 000. */
  reconcileMinAgeMs?: number | undefined;
}

/** What the worker hands on to its session processor unchanged (documented there). */
type ProcessorPassThrough = Pick<
  SessionProcessorOptions,
  | 'chainDelayMs'
  | 'retryDelayMs'
  | 'maxConsecutiveFailures'
  | 'runSession'
  | 'client'
  | 'memoryStore'
  | 'sessionOptions'
  | 'defaultModel'
  | 'defaultFallbackModel'
  | 'observeEvent'
  | 'workerId'
  | 'logger'
  | 'metrics'
  | 'leaseBusyRetryMs'
  | 'home'
  | 'checkpointIntervalMs'
  | 'maxFileBytes'
  | 'push'
>;

export interface BatonWorkerOptions extends ProcessorPassThrough {
  /** Connection for BullMQ's worker (`maxRetriesPerRequest: null`); BullMQ duplicates it for blocking calls. */
  workerConnection: RedisClient;
  /** Connection for our own commands (projects, leases, events, chaining). Waits through outages. */
  commandConnection: RedisClient;
  /** A connection put into subscriber mode for cancel requests. */
  subscriberConnection: RedisClient;
  /**
   * Connection for the sessions' own calls (their project lease, record and events), with a
   * command timeout below the lease TTL (`sessionCommandTimeoutMs`), so a frozen link fails them
   * instead of hanging the session. Default: `commandConnection`.
   */
  sessionConnection?: RedisClient | undefined;
  /** Key prefix with a hash tag. Default `{baton}`. */
  prefix?: string;
  /** Sessions run at once by this worker. */
  concurrency: number;
  /** BullMQ job lock (ms): a crashed worker's job is free again after this. */
  lockDurationMs: number;
  /** BullMQ stall check period (ms); every worker on the queue must use the same. */
  stalledIntervalMs: number;
  /** Crashes a job survives before BullMQ fails it. */
  maxStalledCount: number;
  /** Project lease lifetime without renewal (ms). */
  leaseTtlMs: number;
  maintenance?: MaintenanceOptions;
  /**
   * How long closing the queues and workers may take after the grace period (ms): past it the
   * worker stops waiting for Redis and disconnects. Default 3000.
   */
  closeTimeoutMs?: number | undefined;
  /**
   * Where project notifications go. Every worker delivers notifications queued by any of them
   * (and by `baton cancel`), so give every worker the same settings. Default: no receivers
   * (notifications are consumed and dropped).
   */
  webhooks?: WebhookOptions;
}

/** Webhook receivers and delivery policy (`BATON_WEBHOOK_*`). */
export interface WebhookOptions {
  /** Receivers; each gets every notification. */
  urls: readonly string[];
  /** The webhook signing secret (Standard Webhooks; see docs/workers.md#webhooks). */
  secret: string;
  /** Attempts per delivery. Default 6. */
  attempts?: number;
  /** First retry delay, doubled each time (ms). Default 5000. */
  backoffMs?: number;
}

export interface BatonWorker {
  keys: BatonKeys;
  worker: Worker<SessionJobData, SessionJobResult>;
  queue: Queue<SessionJobData>;
  repository: ProjectRepository;
  metrics: WorkerMetrics;
  /** Sessions running in this process. */
  running: ReadonlyMap<string, RunningSession>;
  /** Resolves once the worker is connected and taking jobs. */
  ready(): Promise<void>;
  /** True while the worker is taking jobs and Redis answers. */
  healthy(): boolean;
  /** Aborts this project's session if it runs here. */
  cancelProject(projectId: string): boolean;
  /**
   * Graceful shutdown: stop taking jobs, abort running sessions with reason `shutdown` so they
   * get their end-of-session turn, wait up to `graceMs`, then close (forcefully if needed).
   * Returns whether every session finished in time. Connections passed in are not closed.
   */
  close(graceMs: number): Promise<{ drained: boolean }>;
}

export function createBatonWorker(options: BatonWorkerOptions): BatonWorker {
  const keys = createKeys(options.prefix);
  const logger = options.logger;
  const webhookQueue = createWebhookQueue({
    connection: options.commandConnection,
    prefix: keys.prefix,
  });
  const repositoryOn = (redis: RedisClient) =>
    new ProjectRepository({
      redis,
      keys,
      onStatusChange: (change) =>
        notifyStatusChange(webhookQueue, change).catch((error: unknown) =>
          logger.warn(
            { projectId: change.projectId, err: error },
            'could not queue the webhook notification',
          ),
        ),
    });
  const repository = repositoryOn(options.commandConnection);
  // The sessions' own calls go over their connection (with a command timeout); the same records.
  const sessionRedis = options.sessionConnection ?? options.commandConnection;
  const sessionRepository =
    sessionRedis === options.commandConnection ? repository : repositoryOn(sessionRedis);
  const queue = createSessionQueue({ connection: options.commandConnection, keys });
  const metrics =
    options.metrics ??
    createWorkerMetrics({
      collectQueueCounts: () =>
        queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed'),
    });
  const running = new Map<string, RunningSession>();
  let closing: Promise<{ drained: boolean }> | undefined;

  // Every job in flight (including ones that only find a busy lease), so shutdown can wait.
  let inFlight = 0;
  const idleWaiters: (() => void)[] = [];
  const processSession = createSessionProcessor({
    repository: sessionRepository,
    queue,
    lease: { redis: sessionRedis, keys, ttlMs: options.leaseTtlMs },
    runSession: options.runSession,
    client: options.client,
    memoryStore: options.memoryStore,
    ...(options.sessionOptions ? { sessionOptions: options.sessionOptions } : {}),
    defaultModel: options.defaultModel,
    ...(options.defaultFallbackModel === undefined
      ? {}
      : { defaultFallbackModel: options.defaultFallbackModel }),
    observeEvent: (event) => {
      options.observeEvent?.(event);
      if (event.type !== 'feature-regressed') return;
      const { evidence } = event;
      notifyFeatureRegressed(webhookQueue, {
        projectId: event.projectId,
        at: event.at,
        feature: {
          id: event.featureId,
          check: evidence.command,
          exitCode: evidence.exitCode,
          commit: evidence.commit,
          output: evidence.outputTail,
        },
      }).catch((error: unknown) =>
        logger.warn(
          { projectId: event.projectId, err: error },
          'could not queue the webhook notification',
        ),
      );
    },
    workerId: options.workerId,
    logger,
    metrics,
    chainDelayMs: options.chainDelayMs,
    retryDelayMs: options.retryDelayMs,
    maxConsecutiveFailures: options.maxConsecutiveFailures,
    home: options.home,
    ...(options.checkpointIntervalMs === undefined
      ? {}
      : { checkpointIntervalMs: options.checkpointIntervalMs }),
    ...(options.push === undefined ? {} : { push: options.push }),
    maxFileBytes: options.maxFileBytes,
    running,
    stopping: () => closing !== undefined,
    ...(options.leaseBusyRetryMs !== undefined
      ? { leaseBusyRetryMs: options.leaseBusyRetryMs }
      : {}),
  });

  const worker = new Worker<SessionJobData, SessionJobResult>(
    SESSION_QUEUE_NAME,
    async (job: Job<SessionJobData>, token?: string, signal?: AbortSignal) => {
      inFlight += 1;
      try {
        return await processSession(job, token, signal);
      } finally {
        inFlight -= 1;
        if (inFlight === 0) for (const wake of idleWaiters.splice(0)) wake();
      }
    },
    {
      connection: options.workerConnection,
      prefix: keys.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalledCount,
      name: options.workerId,
      autorun: false,
    },
  );
  let redisUp = true;
  worker.on('error', (error) => logger.error({ err: error }, 'worker error'));
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const jobId of jobIds) void onJobLockLost(jobId);
  });

  /**
   * BullMQ could not renew a job's lock (it expired during a stall). The project's lease, not the
   * job lock, is what keeps a second session out (a copy of the job that another worker picks up
   * waits for the lease), and every write is fenced by it: if the lease still holds, the session
   * goes on. Otherwise, or before the session holds one, it stops.
   */
  async function onJobLockLost(jobId: string): Promise<void> {
    const session = [...running.values()].find((candidate) => candidate.jobId === jobId);
    const holds = session ? await session.holdsLease().catch(() => false) : false;
    if (session && holds) {
      logger.warn(
        { jobId, projectId: session.projectId },
        'job lock lost (Redis stalled); the project lease still holds, so the session goes on',
      );
      return;
    }
    logger.warn({ jobId }, 'job lock lost; aborting its session');
    worker.cancelJob(jobId, 'lock_lost');
  }
  worker.on('stalled', (jobId) => logger.warn({ jobId }, 'stalled job moved back to wait'));
  worker.on('failed', (job, error) =>
    logger.error({ jobId: job?.id, err: error }, 'session job failed'),
  );
  queue.on('error', (error) => logger.warn({ err: error }, 'queue error'));
  options.commandConnection.on('error', () => (redisUp = false));
  options.commandConnection.on('ready', () => (redisUp = true));

  // Cancel requests are broadcast; the worker running the project's session aborts it.
  const subscriber = options.subscriberConnection;
  subscriber.on('message', (channel: string, projectId: string) => {
    if (channel === keys.cancelChannel) cancelProject(projectId);
    else if (channel === keys.pauseChannel) pauseProject(projectId);
  });

  function pauseProject(projectId: string): void {
    const session = running.get(projectId);
    if (!session) return;
    logger.info({ projectId, jobId: session.jobId }, 'pausing session');
    session.pause();
  }

  function cancelProject(projectId: string): boolean {
    const session = running.get(projectId);
    if (!session) return false;
    logger.info({ projectId, jobId: session.jobId }, 'cancelling session');
    session.abort('cancelled');
    return true;
  }

  const webhooks = options.webhooks;
  const webhookWorker = createWebhookWorker({
    connection: options.workerConnection,
    prefix: keys.prefix,
    urls: webhooks?.urls ?? [],
    secret: webhooks?.secret ?? '',
    ...(webhooks?.attempts === undefined ? {} : { attempts: webhooks.attempts }),
    ...(webhooks?.backoffMs === undefined ? {} : { backoffMs: webhooks.backoffMs }),
    autorun: false,
    loadProject: async (projectId) => {
      const project = await repository.get(projectId);
      return project === null ? null : webhookProjectSnapshot(project);
    },
    onDelivery: async (record) => {
      const log = record.ok ? logger.info.bind(logger) : logger.warn.bind(logger);
      log({ ...record }, record.ok ? 'webhook delivered' : 'webhook delivery failed');
      await repository.recordWebhookDelivery(record);
    },
  });
  webhookWorker.on('error', (error) => logger.error({ err: error }, 'webhook worker error'));
  webhookWorker.on('failed', (job, error) => {
    if (job && job.attemptsMade < (job.opts.attempts ?? 1)) {
      logger.info({ attempt: job.attemptsMade, err: error }, 'webhook attempt failed; retrying');
    }
  });
  webhookQueue.on('error', (error) => logger.warn({ err: error }, 'webhook queue error'));

  // Maintenance runs on its own queue so it never takes a session slot.
  const maintenance = options.maintenance;
  let maintenanceQueue: Queue | undefined;
  let maintenanceWorker: Worker | undefined;
  if (maintenance) {
    maintenanceQueue = new Queue(MAINTENANCE_QUEUE_NAME, {
      connection: options.commandConnection,
      prefix: keys.prefix,
      defaultJobOptions: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
    });
    maintenanceWorker = new Worker(
      MAINTENANCE_QUEUE_NAME,
      async (job: Job) => {
        if (job.name === 'memory-expiry-sweep') {
          const result = (await maintenance.sweepMemory?.()) ?? { removed: 0 };
          logger.info({ removed: result.removed }, 'memory expiry sweep done');
          return result;
        }
        if (job.name === 'reconcile-projects') {
          const actions = await reconcileProjects({
            redis: options.commandConnection,
            keys,
            repository,
            queue,
            minAgeMs: maintenance.reconcileMinAgeMs,
          });
          for (const action of actions) {
            const log = action.action === 'requeued' ? logger.warn : logger.error;
            log.call(logger, { ...action }, `reconciler: project ${action.action}`);
          }
          return { actions: actions.length };
        }
        if (job.name === 'job-retention') {
          const grace = maintenance.jobRetentionMs;
          const completed = await queue.clean(grace, 10_000, 'completed');
          const failed = await queue.clean(grace, 10_000, 'failed');
          logger.info(
            { completed: completed.length, failed: failed.length },
            'finished jobs removed',
          );
          return { completed: completed.length, failed: failed.length };
        }
        return null;
      },
      {
        connection: options.workerConnection,
        prefix: keys.prefix,
        concurrency: 1,
        lockDuration: options.lockDurationMs,
        stalledInterval: options.stalledIntervalMs,
        autorun: false,
      },
    );
    maintenanceWorker.on('error', (error) =>
      logger.error({ err: error }, 'maintenance worker error'),
    );
  }

  let readyPromise: Promise<void> | undefined;
  async function ready(): Promise<void> {
    readyPromise ??= (async () => {
      await subscriber.subscribe(keys.cancelChannel, keys.pauseChannel);
      if (maintenance && maintenanceQueue && maintenanceWorker) {
        if (maintenance.memorySweepEveryMs > 0 && maintenance.sweepMemory) {
          await maintenanceQueue.upsertJobScheduler(
            'memory-expiry-sweep',
            { every: maintenance.memorySweepEveryMs },
            { name: 'memory-expiry-sweep' },
          );
        } else {
          await maintenanceQueue.removeJobScheduler('memory-expiry-sweep');
        }
        await maintenanceQueue.upsertJobScheduler(
          'reconcile-projects',
          { every: maintenance.reconcileEveryMs ?? 30_000 },
          { name: 'reconcile-projects' },
        );
        await maintenanceQueue.upsertJobScheduler(
          'job-retention',
          { every: maintenance.retentionEveryMs ?? 3_600_000 },
          { name: 'job-retention' },
        );
        void maintenanceWorker
          .run()
          .catch((error: unknown) => logger.error({ err: error }, 'maintenance worker stopped'));
      }
      void webhookWorker
        .run()
        .catch((error: unknown) => logger.error({ err: error }, 'webhook worker stopped'));
      void worker.run().catch((error: unknown) => logger.error({ err: error }, 'worker stopped'));
      await worker.waitUntilReady();
    })();
    return readyPromise;
  }

  async function close(graceMs: number): Promise<{ drained: boolean }> {
    closing ??= (async () => {
      logger.info({ running: running.size, graceMs }, 'shutting down');
      // worker.close() would wait for jobs with no timeout and cannot be forced once started,
      // so: pause (stop fetching), abort sessions, wait ourselves, then close.
      await worker.pause(true);
      for (const session of running.values()) session.abort('shutdown');
      worker.cancelAllJobs('shutdown');
      const drained = await waitIdle(graceMs);
      if (!drained) {
        logger.warn(
          { running: [...running.keys()] },
          'grace period over; closing with sessions still running (their jobs will be resumed elsewhere)',
        );
      }
      // Every step below talks to Redis, and an ioredis command waits through an outage without
      // end (maxRetriesPerRequest: null): each gets what is left of one close budget, and whatever
      // still hangs then is cut by the caller disconnecting the connections.
      const closeBy = Date.now() + (options.closeTimeoutMs ?? 3_000);
      const steps: [string, () => Promise<unknown>][] = [
        ['session worker', () => worker.close(!drained)],
        ['maintenance worker', async () => maintenanceWorker?.close(true)],
        ['maintenance queue', async () => maintenanceQueue?.close()],
        // Deliveries in flight get their own short timeout; an unfinished one is retried elsewhere.
        ['webhook worker', () => webhookWorker.close(true)],
        ['webhook queue', () => webhookQueue.close()],
        ['session queue', () => queue.close()],
        ['cancel subscription', () => subscriber.unsubscribe()],
      ];
      const unfinished: string[] = [];
      for (const [name, step] of steps) {
        const outcome = await settleWithin(step(), closeBy - Date.now());
        if (outcome === 'timed_out') unfinished.push(name);
      }
      if (unfinished.length > 0) {
        // BullMQ's own duplicated connections (blocking fetches) are not ours to disconnect.
        for (const closable of [worker, maintenanceWorker, webhookWorker]) {
          void closable?.disconnect().catch(() => undefined);
        }
        logger.warn(
          { unfinished, closeTimeoutMs: options.closeTimeoutMs ?? 3_000 },
          'Redis did not answer while closing; disconnecting (work in flight is resumed elsewhere)',
        );
      }
      logger.info({ drained }, 'worker closed');
      return { drained };
    })();
    return closing;
  }

  /** Resolves when `step` settles (either way) or after `ms`, whichever comes first. */
  async function settleWithin(
    step: Promise<unknown>,
    ms: number,
  ): Promise<'settled' | 'timed_out'> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed_out'>((resolve) => {
      timer = setTimeout(() => resolve('timed_out'), Math.max(0, ms));
    });
    const settled = step.then(
      () => 'settled' as const,
      (error: unknown) => {
        logger.debug({ err: error }, 'close step failed');
        return 'settled' as const;
      },
    );
    try {
      return await Promise.race([settled, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  function waitIdle(timeoutMs: number): Promise<boolean> {
    if (inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  return {
    keys,
    worker,
    queue,
    repository,
    metrics,
    running,
    ready,
    healthy: () => redisUp && worker.isRunning() && !closing,
    cancelProject,
    close,
  };
}
