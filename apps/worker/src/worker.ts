/**
 * The worker host: a session worker, a webhook worker and a maintenance worker over one Redis,
 * started and closed together. Each part is its own class (`session-worker.ts`,
 * `webhook-worker.ts`, `maintenance-worker.ts`); this file composes them and owns shutdown.
 */
import {
  ProjectRepository,
  createKeys,
  createSessionQueue,
  type BatonKeys,
  type RedisClient,
  type SessionJobData,
} from '@baton/projects';
import type { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { MaintenanceWorker, type MaintenanceOptions } from './maintenance-worker.js';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js';
import type { RunningSession, SessionJobResult, SessionProcessorOptions } from './processor.js';
import { SessionWorker } from './session-worker.js';
import { WebhookWorker, type WebhookOptions } from './webhook-worker.js';

/** What the worker hands on to its session processor unchanged (documented there). */
const PROCESSOR_PASS_THROUGH = [
  'chainDelayMs',
  'retryDelayMs',
  'maxConsecutiveFailures',
  'runSession',
  'client',
  'memoryStore',
  'sessionOptions',
  'defaultModel',
  'defaultFallbackModel',
  'workerId',
  'logger',
  'leaseBusyRetryMs',
  'home',
  'checkpointIntervalMs',
  'maxFileBytes',
  'memorySnapshots',
  'push',
] as const satisfies readonly (keyof SessionProcessorOptions)[];

type ProcessorPassThrough = Pick<
  SessionProcessorOptions,
  (typeof PROCESSOR_PASS_THROUGH)[number] | 'observeEvent' | 'metrics'
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
  prefix?: string | undefined;
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
  /** Maintenance schedulers. Default: none run by this worker. */
  maintenance?: MaintenanceOptions | undefined;
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
  webhooks?: WebhookOptions | undefined;
}

/** Picks the fields of `object` named in `names` that are set. */
function pickDefined<T extends object, K extends keyof T>(
  object: T,
  names: readonly K[],
): Pick<T, K> {
  const picked: Partial<Pick<T, K>> = {};
  for (const name of names) if (object[name] !== undefined) picked[name] = object[name];
  return picked as Pick<T, K>;
}

export class BatonWorker {
  readonly keys: BatonKeys;
  readonly queue: Queue<SessionJobData>;
  readonly repository: ProjectRepository;
  readonly metrics: WorkerMetrics;
  readonly #options: BatonWorkerOptions;
  readonly #logger: Logger;
  readonly #sessions: SessionWorker;
  readonly #webhooks: WebhookWorker;
  readonly #maintenance: MaintenanceWorker | undefined;
  #redisUp = true;
  #ready: Promise<void> | undefined;
  #closing: Promise<{ drained: boolean }> | undefined;

  constructor(options: BatonWorkerOptions) {
    this.#options = options;
    const keys = (this.keys = createKeys(options.prefix));
    const logger = (this.#logger = options.logger);
    const repositoryOn = (redis: RedisClient) =>
      new ProjectRepository({
        redis,
        keys,
        onStatusChange: (change) => this.#webhooks.notifyStatusChange(change),
      });
    this.repository = repositoryOn(options.commandConnection);
    this.#webhooks = new WebhookWorker({
      workerConnection: options.workerConnection,
      commandConnection: options.commandConnection,
      keys,
      webhooks: options.webhooks,
      repository: this.repository,
      logger,
    });
    // The sessions' own calls go over their connection (with a command timeout); the same records.
    const sessionRedis = options.sessionConnection ?? options.commandConnection;
    const queue = (this.queue = createSessionQueue({
      connection: options.commandConnection,
      keys,
    }));
    this.metrics =
      options.metrics ??
      createWorkerMetrics({
        collectQueueCounts: () =>
          queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed'),
      });
    this.#sessions = new SessionWorker({
      connection: options.workerConnection,
      subscriber: options.subscriberConnection,
      keys,
      processor: {
        ...pickDefined(options, PROCESSOR_PASS_THROUGH),
        repository:
          sessionRedis === options.commandConnection ? this.repository : repositoryOn(sessionRedis),
        queue,
        lease: { redis: sessionRedis, keys, ttlMs: options.leaseTtlMs },
        metrics: this.metrics,
        observeEvent: (event) => {
          options.observeEvent?.(event);
          if (event.type === 'feature-regressed') this.#webhooks.notifyFeatureRegressed(event);
        },
      },
      concurrency: options.concurrency,
      lockDurationMs: options.lockDurationMs,
      stalledIntervalMs: options.stalledIntervalMs,
      maxStalledCount: options.maxStalledCount,
      workerId: options.workerId,
      logger,
    });
    if (options.maintenance !== undefined) {
      this.#maintenance = new MaintenanceWorker({
        maintenance: options.maintenance,
        workerConnection: options.workerConnection,
        commandConnection: options.commandConnection,
        keys,
        repository: this.repository,
        sessionQueue: queue,
        lockDurationMs: options.lockDurationMs,
        stalledIntervalMs: options.stalledIntervalMs,
        logger,
      });
    }
    queue.on('error', (error) => logger.warn({ err: error }, 'queue error'));
    options.commandConnection.on('error', () => (this.#redisUp = false));
    options.commandConnection.on('ready', () => (this.#redisUp = true));
  }

  /** The BullMQ worker of `baton-sessions`. */
  get worker(): Worker<SessionJobData, SessionJobResult> {
    return this.#sessions.worker;
  }

  /** Sessions running in this process. */
  get running(): ReadonlyMap<string, RunningSession> {
    return this.#sessions.running;
  }

  /** Resolves once the worker is connected and taking jobs. */
  ready(): Promise<void> {
    this.#ready ??= (async () => {
      await this.#sessions.listenForRequests();
      await this.#maintenance?.start();
      this.#webhooks.start();
      await this.#sessions.run();
    })();
    return this.#ready;
  }

  /** True while the worker is taking jobs and Redis answers. */
  healthy(): boolean {
    return this.#redisUp && this.#sessions.isRunning && !this.#closing;
  }

  /** Aborts this project's session if it runs here. */
  cancelProject(projectId: string): boolean {
    return this.#sessions.cancelProject(projectId);
  }

  /**
   * Graceful shutdown: stop taking jobs, abort running sessions with reason `shutdown` so they
   * get their end-of-session turn, wait up to `graceMs`, then close (forcefully if needed).
   * Returns whether every session finished in time. Connections passed in are not closed.
   */
  close(graceMs: number): Promise<{ drained: boolean }> {
    this.#closing ??= this.#close(graceMs);
    return this.#closing;
  }

  async #close(graceMs: number): Promise<{ drained: boolean }> {
    const logger = this.#logger;
    logger.info({ running: this.running.size, graceMs }, 'shutting down');
    const drained = await this.#sessions.drain(graceMs);
    if (!drained) {
      logger.warn(
        { running: [...this.running.keys()] },
        'grace period over; closing with sessions still running (their jobs will be resumed elsewhere)',
      );
    }
    // Every step below talks to Redis, and an ioredis command waits through an outage without
    // end (maxRetriesPerRequest: null): each gets what is left of one close budget, and whatever
    // still hangs then is cut by the caller disconnecting the connections.
    const closeTimeoutMs = this.#options.closeTimeoutMs ?? 3_000;
    const closeBy = Date.now() + closeTimeoutMs;
    const steps: [string, () => Promise<unknown>][] = [
      ['session worker', () => this.#sessions.close(!drained)],
      ...(this.#maintenance?.closeSteps() ?? []),
      ...this.#webhooks.closeSteps(),
      ['session queue', () => this.queue.close()],
      ['cancel subscription', () => this.#sessions.unsubscribe()],
    ];
    const unfinished: string[] = [];
    for (const [name, step] of steps) {
      const outcome = await this.#settleWithin(step(), closeBy - Date.now());
      if (outcome === 'timed_out') unfinished.push(name);
    }
    if (unfinished.length > 0) {
      this.#sessions.disconnect();
      this.#maintenance?.disconnect();
      this.#webhooks.disconnect();
      logger.warn(
        { unfinished, closeTimeoutMs },
        'Redis did not answer while closing; disconnecting (work in flight is resumed elsewhere)',
      );
    }
    logger.info({ drained }, 'worker closed');
    return { drained };
  }

  /** Resolves when `step` settles (either way) or after `ms`, whichever comes first. */
  async #settleWithin(step: Promise<unknown>, ms: number): Promise<'settled' | 'timed_out'> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed_out'>((resolve) => {
      timer = setTimeout(() => resolve('timed_out'), Math.max(0, ms));
    });
    const settled = step.then(
      () => 'settled' as const,
      (error: unknown) => {
        this.#logger.debug({ err: error }, 'close step failed');
        return 'settled' as const;
      },
    );
    try {
      return await Promise.race([settled, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export function createBatonWorker(options: BatonWorkerOptions): BatonWorker {
  return new BatonWorker(options);
}
