import {
  MAINTENANCE_QUEUE_NAME,
  reconcileProjects,
  type BatonKeys,
  type ProjectRepository,
  type RedisClient,
  type SessionJobData,
} from '@baton/projects';
import { Queue, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';

/** Maintenance work run by BullMQ job schedulers (any one worker runs each occurrence). */
export interface MaintenanceOptions {
  /** Memory expiry sweep period in ms; 0 = no sweep. */
  memorySweepEveryMs: number;
  /** Runs one sweep over every project's memory. */
  sweepMemory?: (() => Promise<{ removed: number }>) | undefined;
  /** Finished jobs older than this are removed (ms). */
  jobRetentionMs: number;
  /** How often the retention job runs (ms). Default one hour. */
  retentionEveryMs?: number | undefined;
  /**
   * How often the reconciler looks for `queued`/`running` projects with no job and no lease and
   * queues them again (ms). Default 30 000.
   */
  reconcileEveryMs?: number | undefined;
  /** How old such a project's status must be before it counts as stuck (ms). Default 30 000. */
  reconcileMinAgeMs?: number | undefined;
}

export interface MaintenanceWorkerOptions {
  maintenance: MaintenanceOptions;
  /** Connection for BullMQ's worker (`maxRetriesPerRequest: null`). */
  workerConnection: RedisClient;
  /** Connection for the schedulers and the reconciler's reads. */
  commandConnection: RedisClient;
  keys: BatonKeys;
  repository: ProjectRepository;
  /** The session queue: the reconciler queues stuck projects on it, retention cleans it. */
  sessionQueue: Queue<SessionJobData>;
  lockDurationMs: number;
  stalledIntervalMs: number;
  logger: Logger;
}

const MEMORY_SWEEP = 'memory-expiry-sweep';
const RECONCILE = 'reconcile-projects';
const JOB_RETENTION = 'job-retention';

/**
 * The maintenance jobs (memory expiry sweep, reconciler, job retention) on their own queue, so
 * they never take a session slot. Each is a BullMQ job scheduler: however many workers upsert
 * it, one of them runs each occurrence.
 */
export class MaintenanceWorker {
  readonly #options: MaintenanceWorkerOptions;
  readonly #maintenance: MaintenanceOptions;
  readonly #queue: Queue;
  readonly #worker: Worker;
  readonly #logger: Logger;

  constructor(options: MaintenanceWorkerOptions) {
    this.#options = options;
    this.#maintenance = options.maintenance;
    this.#logger = options.logger;
    this.#queue = new Queue(MAINTENANCE_QUEUE_NAME, {
      connection: options.commandConnection,
      prefix: options.keys.prefix,
      defaultJobOptions: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
    });
    this.#worker = new Worker(MAINTENANCE_QUEUE_NAME, async (job: Job) => this.#process(job), {
      connection: options.workerConnection,
      prefix: options.keys.prefix,
      concurrency: 1,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      autorun: false,
    });
    this.#worker.on('error', (error) =>
      this.#logger.error({ err: error }, 'maintenance worker error'),
    );
  }

  /** Upserts the schedulers (removing the sweep's when there is none), then takes their jobs. */
  async start(): Promise<void> {
    const maintenance = this.#maintenance;
    if (maintenance.memorySweepEveryMs > 0 && maintenance.sweepMemory) {
      await this.#queue.upsertJobScheduler(
        MEMORY_SWEEP,
        { every: maintenance.memorySweepEveryMs },
        { name: MEMORY_SWEEP },
      );
    } else {
      await this.#queue.removeJobScheduler(MEMORY_SWEEP);
    }
    await this.#queue.upsertJobScheduler(
      RECONCILE,
      { every: maintenance.reconcileEveryMs ?? 30_000 },
      { name: RECONCILE },
    );
    await this.#queue.upsertJobScheduler(
      JOB_RETENTION,
      { every: maintenance.retentionEveryMs ?? 3_600_000 },
      { name: JOB_RETENTION },
    );
    void this.#worker
      .run()
      .catch((error: unknown) => this.#logger.error({ err: error }, 'maintenance worker stopped'));
  }

  closeSteps(): [string, () => Promise<unknown>][] {
    return [
      ['maintenance worker', () => this.#worker.close(true)],
      ['maintenance queue', () => this.#queue.close()],
    ];
  }

  disconnect(): void {
    void this.#worker.disconnect().catch(() => undefined);
  }

  async #process(job: Job): Promise<unknown> {
    if (job.name === MEMORY_SWEEP) return this.#sweepMemory();
    if (job.name === RECONCILE) return this.#reconcile();
    if (job.name === JOB_RETENTION) return this.#removeFinishedJobs();
    return null;
  }

  async #sweepMemory(): Promise<{ removed: number }> {
    const result = (await this.#maintenance.sweepMemory?.()) ?? { removed: 0 };
    this.#logger.info({ removed: result.removed }, 'memory expiry sweep done');
    return result;
  }

  async #reconcile(): Promise<{ actions: number }> {
    const actions = await reconcileProjects({
      redis: this.#options.commandConnection,
      keys: this.#options.keys,
      repository: this.#options.repository,
      queue: this.#options.sessionQueue,
      minAgeMs: this.#maintenance.reconcileMinAgeMs,
    });
    for (const action of actions) {
      const log = action.action === 'requeued' ? this.#logger.warn : this.#logger.error;
      log.call(this.#logger, { ...action }, `reconciler: project ${action.action}`);
    }
    return { actions: actions.length };
  }

  async #removeFinishedJobs(): Promise<{ completed: number; failed: number }> {
    const grace = this.#maintenance.jobRetentionMs;
    const queue = this.#options.sessionQueue;
    const completed = await queue.clean(grace, 10_000, 'completed');
    const failed = await queue.clean(grace, 10_000, 'failed');
    this.#logger.info(
      { completed: completed.length, failed: failed.length },
      'finished jobs removed',
    );
    return { completed: completed.length, failed: failed.length };
  }
}
