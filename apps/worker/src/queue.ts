import { Queue, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { RedisClient } from './internal/scripts.js';
import { SESSION_QUEUE_NAME, type BatonKeys } from './keys.js';
import type { ProjectRepository } from './project-repository.js';

/** Why a session job was queued (shown in events and logs). */
export type SessionJobReason = 'enqueue' | 'chain' | 'resume' | 'retry' | 'shutdown';

/** The data of one job on `baton-sessions`: one session of one project. */
export interface SessionJobData {
  projectId: string;
  /** 1-based number of the session this job runs. */
  sessionNumber: number;
  reason: SessionJobReason;
}

/**
 * Deterministic job id: one project's session N always has the same id, so however many
 * producers (chaining, `baton resume`, the dashboard) ask for it, BullMQ keeps one job.
 * BullMQ forbids `:` in custom ids; project ids cannot contain `@`.
 */
export function sessionJobId(projectId: string, sessionNumber: number): string {
  return `${projectId}@${sessionNumber}`;
}

/** Producer connections fail fast instead of queueing commands while Redis is away. */
/** The connection settings that differ between producers and workers. */
export interface ConnectionTuning {
  maxRetriesPerRequest: number | null;
  enableOfflineQueue?: boolean;
  /** Give up connecting after this long (ms). */
  connectTimeout?: number;
  /** Resend commands in flight when a connection drops (ioredis default true). */
  autoResendUnfulfilledCommands?: boolean;
}

export function producerConnectionOptions(): ConnectionTuning {
  return { maxRetriesPerRequest: 1, enableOfflineQueue: false };
}

/** Worker and QueueEvents connections must retry forever (BullMQ refuses anything else). */
export function workerConnectionOptions(): ConnectionTuning {
  return { maxRetriesPerRequest: null };
}

/**
 * Memory-store connections never resend a script that was in flight when the connection dropped:
 * it could apply a mutation twice (same settings as `@baton/storage-redis`'s own connections).
 */
export function memoryConnectionOptions(): ConnectionTuning {
  return { maxRetriesPerRequest: 1, autoResendUnfulfilledCommands: false, connectTimeout: 5000 };
}

export function createRedis(url: string, options: ConnectionTuning): Redis {
  return new Redis(url, { ...options });
}

/** Resolves once a client is connected, or rejects after `timeoutMs`. */
export async function waitForRedis(redis: RedisClient, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(lastError ? describe(lastError) : `no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    let lastError: unknown;
    const onReady = () => {
      cleanup();
      resolve();
    };
    const onError = (error: unknown) => {
      lastError = error;
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
    };
    redis.on('ready', onReady);
    redis.on('error', onError);
  });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return code && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}

export interface SessionQueueOptions {
  /** Producer connection (see `producerConnectionOptions`). The queue does not close it. */
  connection: Redis;
  keys: BatonKeys;
  /** How long finished jobs are kept, in ms. Default 7 days. */
  retentionMs?: number;
}

export function createSessionQueue(options: SessionQueueOptions): Queue<SessionJobData> {
  const retentionSeconds = Math.ceil((options.retentionMs ?? 7 * 24 * 3_600_000) / 1000);
  return new Queue<SessionJobData>(SESSION_QUEUE_NAME, {
    connection: options.connection,
    prefix: options.keys.prefix,
    defaultJobOptions: {
      // Sessions are retried by our chaining logic, not by BullMQ attempts.
      attempts: 1,
      removeOnComplete: { age: retentionSeconds, count: 10_000 },
      removeOnFail: { age: retentionSeconds, count: 10_000 },
    },
  });
}

/**
 * Queues session `sessionNumber` of a project unless that session's job is already waiting,
 * delayed or active. A finished job with the same id (an earlier attempt that was cancelled or
 * failed) is removed first so the id can be used again.
 */
export async function enqueueSession(
  queue: Queue<SessionJobData>,
  repository: ProjectRepository,
  data: SessionJobData,
  options: { delayMs?: number } = {},
): Promise<{ jobId: string; added: boolean }> {
  const jobId = sessionJobId(data.projectId, data.sessionNumber);
  const existing = await queue.getJob(jobId);
  if (existing) {
    const state = await existing.getState();
    if (state === 'completed' || state === 'failed' || state === 'unknown') {
      await existing.remove().catch(() => undefined);
    } else {
      return { jobId, added: false };
    }
  }
  const delayMs = Math.max(0, options.delayMs ?? 0);
  const jobOptions: JobsOptions = { jobId };
  if (delayMs > 0) jobOptions.delay = delayMs;
  await queue.add(data.reason, data, jobOptions);
  await repository.appendEvent(data.projectId, {
    v: 1,
    type: 'session-queued',
    at: Date.now(),
    projectId: data.projectId,
    sessionNumber: data.sessionNumber,
    jobId,
    delayMs,
    reason: data.reason,
  });
  return { jobId, added: true };
}
