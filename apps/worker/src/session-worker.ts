import {
  SESSION_QUEUE_NAME,
  type BatonKeys,
  type RedisClient,
  type SessionJobData,
} from '@baton/projects';
import { Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import {
  createSessionProcessor,
  type RunningSession,
  type SessionJobResult,
  type SessionProcessorOptions,
} from './processor.js';

export interface SessionWorkerOptions {
  /** Connection for BullMQ's worker (`maxRetriesPerRequest: null`). */
  connection: RedisClient;
  /** A connection put into subscriber mode for cancel and pause requests. */
  subscriber: RedisClient;
  keys: BatonKeys;
  /** What every session job gets (the worker adds the running sessions and its stopping flag). */
  processor: Omit<SessionProcessorOptions, 'running' | 'stopping'>;
  /** Sessions run at once. */
  concurrency: number;
  /** BullMQ job lock (ms). */
  lockDurationMs: number;
  /** BullMQ stall check period (ms). */
  stalledIntervalMs: number;
  /** Crashes a job survives before BullMQ fails it. */
  maxStalledCount: number;
  workerId: string;
  logger: Logger;
}

/**
 * The `baton-sessions` worker: runs session jobs, keeps the sessions running here so cancel and
 * pause requests (broadcast to every worker) and shutdown reach them, and counts every job in
 * flight so shutdown can wait for them.
 */
export class SessionWorker {
  readonly worker: Worker<SessionJobData, SessionJobResult>;
  /** Sessions running in this process, by project id. */
  readonly running = new Map<string, RunningSession>();
  readonly #subscriber: RedisClient;
  readonly #keys: BatonKeys;
  readonly #logger: Logger;
  /** Every job in flight (including ones that only find a busy lease), so shutdown can wait. */
  #inFlight = 0;
  readonly #idleWaiters: (() => void)[] = [];
  #stopping = false;

  constructor(options: SessionWorkerOptions) {
    this.#subscriber = options.subscriber;
    this.#keys = options.keys;
    this.#logger = options.logger;
    const processSession = createSessionProcessor({
      ...options.processor,
      running: this.running,
      stopping: () => this.#stopping,
    });
    this.worker = new Worker<SessionJobData, SessionJobResult>(
      SESSION_QUEUE_NAME,
      async (job: Job<SessionJobData>, token?: string, signal?: AbortSignal) => {
        this.#inFlight += 1;
        try {
          return await processSession(job, token, signal);
        } finally {
          this.#inFlight -= 1;
          if (this.#inFlight === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
        }
      },
      {
        connection: options.connection,
        prefix: options.keys.prefix,
        concurrency: options.concurrency,
        lockDuration: options.lockDurationMs,
        stalledInterval: options.stalledIntervalMs,
        maxStalledCount: options.maxStalledCount,
        name: options.workerId,
        autorun: false,
      },
    );
    const logger = this.#logger;
    this.worker.on('error', (error) => logger.error({ err: error }, 'worker error'));
    this.worker.on('lockRenewalFailed', (jobIds) => {
      for (const jobId of jobIds) void this.#onJobLockLost(jobId);
    });
    this.worker.on('stalled', (jobId) => logger.warn({ jobId }, 'stalled job moved back to wait'));
    this.worker.on('failed', (job, error) =>
      logger.error({ jobId: job?.id, err: error }, 'session job failed'),
    );
    // Cancel requests are broadcast; the worker running the project's session aborts it.
    this.#subscriber.on('message', (channel: string, projectId: string) => {
      if (channel === this.#keys.cancelChannel) this.cancelProject(projectId);
      else if (channel === this.#keys.pauseChannel) this.#pauseProject(projectId);
    });
  }

  /** Listens for cancel and pause requests (before any job is taken). */
  async listenForRequests(): Promise<void> {
    await this.#subscriber.subscribe(this.#keys.cancelChannel, this.#keys.pauseChannel);
  }

  /** Starts taking jobs (after the other workers started); resolves once connected. */
  async run(): Promise<void> {
    void this.worker
      .run()
      .catch((error: unknown) => this.#logger.error({ err: error }, 'worker stopped'));
    await this.worker.waitUntilReady();
  }

  get isRunning(): boolean {
    return this.worker.isRunning();
  }

  /** Aborts this project's session if it runs here. */
  cancelProject(projectId: string): boolean {
    const session = this.running.get(projectId);
    if (!session) return false;
    this.#logger.info({ projectId, jobId: session.jobId }, 'cancelling session');
    session.abort('cancelled');
    return true;
  }

  /**
   * Stops taking jobs, aborts the running sessions with reason `shutdown` (they get their
   * end-of-session turn) and waits up to `graceMs` for every job in flight. Returns whether they
   * all finished. `worker.close()` would wait with no timeout and cannot be forced once started,
   * so: pause (stop fetching), abort, wait here, and let the caller close.
   */
  async drain(graceMs: number): Promise<boolean> {
    this.#stopping = true;
    await this.worker.pause(true);
    for (const session of this.running.values()) session.abort('shutdown');
    this.worker.cancelAllJobs('shutdown');
    return this.#waitIdle(graceMs);
  }

  /** Closes the BullMQ worker; `force` when sessions are still running. */
  async close(force: boolean): Promise<void> {
    await this.worker.close(force);
  }

  async unsubscribe(): Promise<void> {
    await this.#subscriber.unsubscribe();
  }

  /** BullMQ's own duplicated connections (blocking fetches) are not the caller's to disconnect. */
  disconnect(): void {
    void this.worker.disconnect().catch(() => undefined);
  }

  #pauseProject(projectId: string): void {
    const session = this.running.get(projectId);
    if (!session) return;
    this.#logger.info({ projectId, jobId: session.jobId }, 'pausing session');
    session.pause();
  }

  /**
   * BullMQ could not renew a job's lock (it expired during a stall). The project's lease, not the
   * job lock, is what keeps a second session out (a copy of the job that another worker picks up
   * waits for the lease), and every write is fenced by it: if the lease still holds, the session
   * goes on. Otherwise, or before the session holds one, it stops.
   */
  async #onJobLockLost(jobId: string): Promise<void> {
    const session = [...this.running.values()].find((candidate) => candidate.jobId === jobId);
    const holds = session ? await session.holdsLease().catch(() => false) : false;
    if (session && holds) {
      this.#logger.warn(
        { jobId, projectId: session.projectId },
        'job lock lost (Redis stalled); the project lease still holds, so the session goes on',
      );
      return;
    }
    this.#logger.warn({ jobId }, 'job lock lost; aborting its session');
    this.worker.cancelJob(jobId, 'lock_lost');
  }

  #waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
