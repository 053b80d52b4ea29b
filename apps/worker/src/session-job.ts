import type Anthropic from '@anthropic-ai/sdk';
import type { MemoryStore } from '@baton/core';
import {
  SessionControl,
  acquireProjectLease,
  createRedisGuidance,
  createRedisTranscripts,
  enqueueSession,
  leaseRenewalIntervalMs,
  retryRefused,
  startLeaseHeartbeat,
  type AbortReason,
  type LeaseOptions,
  type ProjectFence,
  type ProjectLease,
  type ProjectRecord,
  type ProjectRepository,
  type SessionChain,
  type SessionJobData,
} from '@baton/projects';
import type { RunSessionOptions, SessionEvent } from '@baton/session';
import { DelayedError, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { WorkerMetrics } from './metrics.js';
import type { SessionRunner } from './session-runner.js';
import type { PushRetryOptions } from '@baton/workspace';
import type { MemoryFence } from '@baton/storage-redis';

/** Why a job that names no project generation is refused (queued by a Baton before 2026-12-04). */
const UNKNOWN_GENERATION =
  "carries no project generation (queued by an earlier Baton version): refused, since it cannot be told from a job of a project Redis lost; the reconciler queues the project's session again";

/** What a session job returns (stored by BullMQ as the job's return value). */
export type SessionJobResult =
  | { ran: false; skipped: string }
  | {
      ran: true;
      sessionId: string;
      outcome: string;
      decision: string;
      status: string | null;
    };

/** A running session, so cancel requests and shutdown can reach it. */
export interface RunningSession {
  projectId: string;
  jobId: string;
  sessionId: string;
  abort(reason: AbortReason): void;
  /** An operator paused the project: the session closes its log and stops. */
  pause(): void;
  /** True while the session's project lease still holds its token in Redis. */
  holdsLease(): Promise<boolean>;
}

/** Options of `createSessionProcessor`, shared by every `SessionJob` of a worker. */
export interface SessionProcessorOptions {
  repository: ProjectRepository;
  /** Producer queue used to chain the next session. */
  queue: Queue<SessionJobData>;
  lease: LeaseOptions;
  /** Runs one session; default in the worker is `runSession` from `@baton/session`. */
  runSession: SessionRunner;
  client: Anthropic;
  /**
   * The memory of one project. With `fence`, every write presents the session's fencing token
   * and is refused once a newer session holds the project; the factory claims the fence before
   * returning, so the session this one replaced is refused from then on.
   */
  memoryStore: (projectId: string, fence?: MemoryFence) => MemoryStore | Promise<MemoryStore>;
  /** Extra options merged into every `runSession` call (context config, tools, ...). */
  sessionOptions?: (project: ProjectRecord) => Partial<RunSessionOptions>;
  defaultModel: string;
  /** Sees every event of every session before it is published (traces). Default: none. */
  observeEvent?: ((event: SessionEvent) => void) | undefined;
  /** Fallback model for projects that name none (`BATON_FALLBACK_MODEL`). Default: none. */
  defaultFallbackModel?: string | undefined;
  workerId: string;
  logger: Logger;
  metrics?: WorkerMetrics;
  chainDelayMs: number;
  retryDelayMs: number;
  maxConsecutiveFailures: number;
  /** Sessions running in this process, by project id. */
  running: Map<string, RunningSession>;
  /** Upper bound on how long a job waits before retrying a busy lease. Default 500 ms. */
  leaseBusyRetryMs?: number;
  /** True once this worker is shutting down: jobs fetched after that go back to the queue. */
  stopping?: () => boolean;
  /**
   * This worker's `BATON_HOME`, absolute: it keeps its own clone of each project under it
   * (`workspaces/<id>`, `git/<id>.git`) and needs nothing of another worker's disk.
   */
  home: string;
  /** Least time between two checkpoints after turns that changed files (ms). Default the session's (5000). */
  checkpointIntervalMs?: number;
  /** Retries of checkpoint pushes. Default `@baton/workspace`'s (4 final attempts, 0.5 s doubling). */
  push?: PushRetryOptions;
  /** `BATON_MAX_FILE_BYTES`: files larger are left out of checkpoints. Default 50 MiB. */
  maxFileBytes?: number | undefined;
  /** `BATON_MEMORY_SNAPSHOTS`: memory snapshots in git after pushed checkpoints. Default true. */
  memorySnapshots?: boolean | undefined;
}

/**
 * One `baton-sessions` job: check it is still wanted, take the project's lease, run one step of
 * the session chain (claim, prepare, run, record, decide) while the lease is renewed, release.
 */
export class SessionJob {
  readonly #options: SessionProcessorOptions;
  readonly #chain: SessionChain;
  readonly #job: Job<SessionJobData>;
  readonly #token: string | undefined;
  readonly #jobSignal: AbortSignal | undefined;
  readonly #log: Logger;
  #saidFencedOut = false;

  constructor(
    options: SessionProcessorOptions,
    chain: SessionChain,
    job: Job<SessionJobData>,
    token: string | undefined,
    jobSignal: AbortSignal | undefined,
  ) {
    this.#options = options;
    this.#chain = chain;
    this.#job = job;
    this.#token = token;
    this.#jobSignal = jobSignal;
    this.#log = options.logger.child({
      projectId: job.data.projectId,
      jobId: job.id ?? '',
      sessionNumber: job.data.sessionNumber,
    });
  }

  async run(): Promise<SessionJobResult> {
    const { projectId, sessionNumber } = this.#job.data;
    const generation = this.#generation();
    if (generation === undefined) return this.#refuse(UNKNOWN_GENERATION);
    const project = await this.#options.repository.get(projectId);
    const stale = this.#chain.whyStale(project, generation);
    if (stale !== undefined) return this.#refuse(stale);
    const unwanted = this.#chain.whyNotRunnable(project, sessionNumber, generation);
    if (unwanted !== undefined) return this.#skip(unwanted);
    const lease = await this.#takeLease();
    const control = new SessionControl(this.#jobSignal);
    const heartbeat = this.#startHeartbeat(lease, control);
    const fence = { token: lease.fence, onFenced: () => this.#fencedOut(control, lease) };
    let registered = false;
    try {
      const outcome = await this.#chain.runOne({
        projectId,
        sessionNumber,
        jobId: this.#job.id ?? '',
        generation,
        control,
        memory: () => this.#options.memoryStore(projectId, fence),
        // Every write of this session's record is refused once the lease moved on.
        log: this.#options.repository.fenced(projectId, fence),
        sessionOptions: (claimed) => this.#sessionOptions(claimed, fence),
        // A session that lost its lease pushes no checkpoint: its commits stay in this worker's
        // clone, and the new holder's branch is left alone.
        mayPush: () => this.#mayPush(control, lease),
        // Checkpoints carry the fence; a replaced session's late push is taken back, kept aside.
        fence: lease.fence,
        onClaimed: (sessionId) => {
          this.#register(control, sessionId, lease);
          registered = true;
        },
        onInterrupted: () => this.#options.metrics?.interruptions.inc(),
        onSessionReturned: () => heartbeat.stop(),
        queueNext: async (next) => {
          // Redis full or read-only for a moment: the next job is retried, not lost to a failed
          // job; a longer fault is the reconciler's.
          await retryRefused(() =>
            enqueueSession(
              this.#options.queue,
              this.#options.repository,
              { projectId, sessionNumber: next.sessionNumber, reason: next.reason, generation },
              { delayMs: next.delayMs },
            ),
          );
        },
      });
      if (!outcome.ran) return this.#skip(outcome.skipped);
      const metrics = this.#options.metrics;
      if (outcome.decision.kind === 'abandon') {
        metrics?.sessions.inc({ outcome: 'abandoned' });
      } else {
        metrics?.sessions.inc({ outcome: outcome.result.outcome });
        metrics?.costUsd.inc(outcome.result.usage.costUsd);
      }
      return {
        ran: true,
        sessionId: outcome.sessionId,
        outcome: outcome.result.outcome,
        decision: outcome.decision.kind,
        status: outcome.status,
      };
    } finally {
      heartbeat.stop();
      control.dispose();
      if (registered) this.#unregister();
      await this.#releaseLease(lease);
    }
  }

  #skip(why: string): SessionJobResult {
    this.#log.info({ skipped: why }, 'session job skipped');
    return { ran: false, skipped: why };
  }

  /** The job's project generation, or undefined when it carries none. */
  #generation(): number | undefined {
    const { generation } = this.#job.data as Partial<SessionJobData>;
    return typeof generation === 'number' && Number.isSafeInteger(generation)
      ? generation
      : undefined;
  }

  /**
   * A job that is not its project's (see `SessionJobData.generation`): one warning line, and the
   * job ends with the reason as its result. It never claims, runs the model or queues anything.
   */
  #refuse(reason: string): SessionJobResult {
    this.#log.warn(
      { refused: reason, generation: this.#job.data.generation ?? null },
      'session job refused: not a job of this project',
    );
    return { ran: false, skipped: reason };
  }

  /**
   * The worker's own session options: guidance and transcripts in Redis, written under the
   * session's fence (refused once the lease moved on), then its configuration.
   */
  #sessionOptions(project: ProjectRecord, fence: ProjectFence): Partial<RunSessionOptions> {
    const { repository } = this.#options;
    const where = { redis: repository.redis, keys: repository.keys, projectId: project.id, fence };
    return {
      ...this.#options.sessionOptions?.(project),
      guidance: createRedisGuidance(where),
      transcript: createRedisTranscripts(where),
    };
  }

  /** Takes the project's lease, or hands the job back to the queue (throwing `DelayedError`). */
  async #takeLease(): Promise<ProjectLease> {
    if (this.#options.stopping?.()) {
      // Fetched while shutting down: hand it straight back for another worker.
      await this.#job.moveToDelayed(Date.now(), this.#token);
      throw new DelayedError();
    }
    const claim = await acquireProjectLease(this.#options.lease, this.#job.data.projectId);
    if (!claim.acquired) {
      // Another session of this project is running somewhere: come back shortly. The job keeps
      // its id, so this never creates a second queued session.
      const busyRetryMs = this.#options.leaseBusyRetryMs ?? 500;
      const delay = Math.min(claim.retryInMs, busyRetryMs) + Math.floor(Math.random() * 100);
      this.#log.debug({ delay }, 'project lease busy; job delayed');
      await this.#job.moveToDelayed(Date.now() + delay, this.#token);
      throw new DelayedError();
    }
    return claim.lease;
  }

  /** Renews the lease while the session runs, and turns a lost lease, cancel or pause into control. */
  #startHeartbeat(lease: ProjectLease, control: SessionControl): { stop(): void } {
    return startLeaseHeartbeat(lease, {
      intervalMs: leaseRenewalIntervalMs(lease.ttlMs),
      onLost: (why) => {
        this.#log.warn(
          { why, fence: lease.fence },
          why === 'expired'
            ? 'project lease expired: no renewal reached Redis within its TTL; aborting session'
            : 'project lease lost; aborting session',
        );
        control.abort('lease_lost');
      },
      onStatus: control.followStatus,
      onError: (error) => this.#log.warn({ err: error }, 'lease renewal failed'),
    });
  }

  /**
   * A write of this session was refused because a newer session holds the project (this one
   * lost its lease: a cut link, a stall): stop at once, leave the record to the new holder.
   */
  #fencedOut(control: SessionControl, lease: ProjectLease): void {
    // Said once per session, also when the lease watchdog stopped it first: this is the proof
    // that a late write of a replaced session reached Redis and was refused.
    if (this.#saidFencedOut) return;
    this.#saidFencedOut = true;
    this.#log.warn(
      { fence: lease.fence },
      'session fenced out: a newer session holds the project; its write was refused and the session stops',
    );
    control.abort('lease_lost');
  }

  /**
   * Why a checkpoint push must not happen, if it must not: the lease moved on (the session stops
   * too) or Redis did not confirm the lease before it could have expired. Git has no fencing of
   * its own, so the lease is checked right before each push.
   */
  async #mayPush(control: SessionControl, lease: ProjectLease): Promise<string | undefined> {
    const refused =
      "this session no longer holds the project (its lease moved on): the checkpoint stays in this worker's clone and is not pushed";
    if (control.abandoned) return refused;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(
        () => resolve('expired'),
        Math.max(0, lease.validUntil - performance.now()),
      );
    });
    try {
      const holds = await Promise.race([lease.holds(), expired]);
      if (holds === true) return undefined;
      if (holds === 'expired') return refused;
      this.#fencedOut(control, lease);
      return refused;
    } catch {
      return 'Redis did not confirm that this session still holds the project; the checkpoint is pushed at the next one';
    } finally {
      clearTimeout(timer);
    }
  }

  /** Lets cancel requests, lost job locks and shutdown reach the session. */
  #register(control: SessionControl, sessionId: string, lease: ProjectLease): void {
    this.#options.running.set(this.#job.data.projectId, {
      projectId: this.#job.data.projectId,
      jobId: this.#job.id ?? '',
      sessionId,
      abort: control.abort,
      pause: control.pause,
      holdsLease: () => lease.holds(),
    });
    this.#options.metrics?.activeSessions.inc();
  }

  #unregister(): void {
    this.#options.running.delete(this.#job.data.projectId);
    this.#options.metrics?.activeSessions.dec();
  }

  async #releaseLease(lease: ProjectLease): Promise<void> {
    try {
      await lease.release();
    } catch (error) {
      // It expires on its own after ttlMs.
      this.#log.warn({ err: error }, 'could not release project lease');
    }
  }
}
