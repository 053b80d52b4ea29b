import { Queue, type JobsOptions } from 'bullmq';
import type { RedisClient } from '@baton/storage-redis';
import { SESSION_QUEUE_NAME, type BatonKeys } from './keys.js';
import type { ProjectRepository } from './project-repository.js';
import type { SessionJobReason } from './chaining.js';

export type { SessionJobReason } from './chaining.js';

/** The data of one job on `baton-sessions`: one session of one project. */
export interface SessionJobData {
  projectId: string;
  /** 1-based number of the session this job runs. */
  sessionNumber: number;
  reason: SessionJobReason;
  /**
   * Which creation of the project id this job belongs to: the project's `createdAt` when it was
   * queued. A project Redis lost and a user created again under the same id has a new one, so a
   * job left over from the lost project (`id@N`) is refused by workers instead of running as
   * session N of the new project (`SessionChain.whyStale`).
   */
  generation: number;
}

/**
 * Deterministic job id: one project's session N always has the same id, so however many
 * producers (chaining, `baton resume`, the dashboard) ask for it, BullMQ keeps one job.
 * BullMQ forbids `:` in custom ids; project ids cannot contain `@`.
 */
export function sessionJobId(projectId: string, sessionNumber: number): string {
  return `${projectId}@${sessionNumber}`;
}

export interface SessionQueueOptions {
  /** Producer connection (see `producerConnectionOptions`). The queue does not close it. */
  connection: RedisClient;
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
 * failed), and a waiting or delayed one left over from an earlier project of the same id (another
 * `generation`), are removed first so the id can be used again. An active job of an earlier
 * project is left to the worker holding it, which refuses it; the reconciler then queues this
 * session.
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
    const finished = state === 'completed' || state === 'failed' || state === 'unknown';
    const stale = state !== 'active' && existing.data.generation !== data.generation;
    if (finished || stale) {
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
