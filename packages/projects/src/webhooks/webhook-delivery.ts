import { randomUUID } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import type { RedisClient } from '@baton/storage-redis';
import {
  WEBHOOK_OUTPUT_CHARS,
  buildWebhookPayload,
  webhookEventType,
  type RegressedFeature,
  type WebhookEventType,
  type WebhookProjectSnapshot,
  type WebhookTrigger,
} from './payload.js';
import { createWebhookSigner } from './signature.js';

/** The BullMQ queue of notifications and deliveries (under the same `{hash tag}` prefix as sessions). */
export const WEBHOOK_QUEUE_NAME = 'baton-webhooks';

/**
 * `notify`: a project changed status; the webhook worker builds one body and fans it out.
 * `deliver`: POST that body to one URL, retried by BullMQ with exponential backoff.
 */
export type WebhookJobData =
  | { kind: 'notify'; trigger: WebhookTrigger }
  | {
      kind: 'deliver';
      notificationId: string;
      projectId: string;
      type: WebhookEventType;
      url: string;
      body: string;
    };

/** The outcome of one delivery (all its attempts), as recorded for `baton status` and the dashboard. */
export interface WebhookDeliveryRecord {
  notificationId: string;
  projectId: string;
  type: WebhookEventType;
  /** The receiver's origin only: paths and queries of webhook URLs often hold secrets. */
  target: string;
  ok: boolean;
  /** Attempts made, the successful one included. */
  attempts: number;
  /** Last HTTP status, if the receiver answered. */
  status?: number | undefined;
  /** Why the last attempt failed. */
  error?: string | undefined;
  at: number;
}

/** Options of `createWebhookQueue`. */
export interface WebhookQueueOptions {
  /** A producer connection; the queue does not close it. */
  connection: RedisClient;
  /** The workers' key prefix, with its `{hash tag}`. */
  prefix: string;
}

export function createWebhookQueue(options: WebhookQueueOptions): Queue<WebhookJobData> {
  return new Queue<WebhookJobData>(WEBHOOK_QUEUE_NAME, {
    connection: options.connection,
    prefix: options.prefix,
    defaultJobOptions: {
      removeOnComplete: { age: 7 * 24 * 3600, count: 1000 },
      removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
    },
  });
}

/**
 * Queues the notification of a status change if that change is one webhooks report (completed,
 * failed, paused, cancelled, budget reached). Idempotent per project, type and time: a retried
 * caller does not notify twice. Returns the webhook type, or null when nothing was queued.
 */
export async function notifyStatusChange(
  queue: Queue<WebhookJobData>,
  trigger: WebhookTrigger,
): Promise<WebhookEventType | null> {
  const type = webhookEventType(trigger);
  if (type === null) return null;
  // BullMQ forbids ':' in custom ids; project ids cannot contain '@'.
  await queue.add(
    'notify',
    { kind: 'notify', trigger },
    {
      jobId: `${trigger.projectId}@${type}@${trigger.at}`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
    },
  );
  return type;
}

/**
 * Queues a `feature.regressed` notification: Baton set `regressed.id` back to failing because its
 * check failed on the end-of-session re-run. Idempotent per project, feature and time.
 */
export async function notifyFeatureRegressed(
  queue: Queue<WebhookJobData>,
  regression: { projectId: string; at: number; feature: RegressedFeature },
): Promise<void> {
  const trigger: WebhookTrigger = {
    projectId: regression.projectId,
    to: 'running',
    reason: `${regression.feature.id} regressed: its check failed on a re-run`,
    at: regression.at,
    regressed: {
      ...regression.feature,
      output: regression.feature.output.slice(-WEBHOOK_OUTPUT_CHARS),
    },
  };
  await queue.add(
    'notify',
    { kind: 'notify', trigger },
    {
      jobId: `${regression.projectId}@feature.regressed@${regression.feature.id}@${regression.at}`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
    },
  );
}

/** Options of `createWebhookWorker`. */
export interface WebhookWorkerOptions {
  /** A worker connection (`maxRetriesPerRequest: null`); the worker does not close it. */
  connection: RedisClient;
  prefix: string;
  /** Receivers (`BATON_WEBHOOK_URL`). With none, notifications are consumed and dropped. */
  urls: readonly string[];
  /**
   * The signing secret (`BATON_WEBHOOK_SECRET`): `whsec_<base64>` as Standard Webhooks serialises
   * it, or any other string used as its UTF-8 bytes. Checked here: a malformed one throws.
   */
  secret: string;
  /** The project's figures for the body; null if it was deleted meanwhile (then nothing is sent). */
  loadProject(projectId: string): Promise<WebhookProjectSnapshot | null>;
  /** Called once per delivery when it succeeded or used its last attempt. Errors are ignored. */
  onDelivery?(record: WebhookDeliveryRecord): Promise<void> | void;
  /** Attempts per delivery. Default 6. */
  attempts?: number | undefined;
  /** First retry delay, doubled each time (ms). Default 5000. */
  backoffMs?: number | undefined;
  /** Time one POST may take (ms). Default 10 000. */
  timeoutMs?: number;
  /** Deliveries in flight at once. Default 4. */
  concurrency?: number;
  /** Start taking jobs at once (BullMQ's `autorun`). Default true. */
  autorun?: boolean;
}

/** The origin of a URL, for records and logs. */
export function webhookTarget(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
}

/**
 * The BullMQ worker that turns notifications into signed POSTs. Each delivery is its own job, so
 * one receiver that is down does not hold back the others; a non-2xx answer, a redirect, a
 * timeout or a refused connection is retried with exponential backoff.
 */
export function createWebhookWorker(options: WebhookWorkerOptions): Worker<WebhookJobData> {
  const attempts = options.attempts ?? 6;
  const backoffMs = options.backoffMs ?? 5000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  // Without receivers there is nothing to sign (and no secret is required).
  const sign = options.urls.length === 0 ? null : createWebhookSigner(options.secret);
  const queue = createWebhookQueue({ connection: options.connection, prefix: options.prefix });
  queue.on('error', () => undefined);

  async function record(result: WebhookDeliveryRecord): Promise<void> {
    try {
      await options.onDelivery?.(result);
    } catch {
      // A record that cannot be written must not turn a delivered webhook into a retried one.
    }
  }

  async function notify(job: Job<WebhookJobData>, trigger: WebhookTrigger): Promise<void> {
    const type = webhookEventType(trigger);
    if (type === null || options.urls.length === 0) return;
    const project = await options.loadProject(trigger.projectId);
    if (project === null) return;
    // One id per notification, stable across a retry of this job: deliveries are added with ids.
    const notificationId = job.id ?? randomUUID();
    const body = JSON.stringify(buildWebhookPayload(notificationId, type, trigger, project));
    await queue.addBulk(
      options.urls.map((url, index) => ({
        name: 'deliver',
        data: { kind: 'deliver', notificationId, projectId: trigger.projectId, type, url, body },
        opts: {
          jobId: `${notificationId}@${index}`,
          attempts,
          backoff: { type: 'exponential', delay: backoffMs },
        },
      })),
    );
  }

  async function deliver(
    job: Job<WebhookJobData>,
    data: Extract<WebhookJobData, { kind: 'deliver' }>,
  ): Promise<void> {
    const attempt = job.attemptsMade + 1;
    let status: number | undefined;
    try {
      const response = await fetch(data.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'baton-webhooks',
          'x-baton-event': data.type,
          'x-baton-delivery': data.notificationId,
          // Signed per attempt: each retry carries its own webhook-timestamp.
          ...sign?.(data.notificationId, data.body),
        },
        body: data.body,
      });
      status = response.status;
      await response.body?.cancel().catch(() => undefined);
      if (status < 200 || status >= 300) throw new Error(`receiver answered HTTP ${status}`);
    } catch (error) {
      if (attempt >= (job.opts.attempts ?? 1)) {
        await record({
          notificationId: data.notificationId,
          projectId: data.projectId,
          type: data.type,
          target: webhookTarget(data.url),
          ok: false,
          attempts: attempt,
          status,
          error: describeDeliveryError(error),
          at: Date.now(),
        });
      }
      throw error;
    }
    await record({
      notificationId: data.notificationId,
      projectId: data.projectId,
      type: data.type,
      target: webhookTarget(data.url),
      ok: true,
      attempts: attempt,
      status,
      at: Date.now(),
    });
  }

  const worker = new Worker<WebhookJobData>(
    WEBHOOK_QUEUE_NAME,
    async (job) => {
      const data = job.data;
      if (data.kind === 'notify') await notify(job, data.trigger);
      else await deliver(job, data);
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 4,
      // eslint-disable-next-line no-restricted-syntax -- BullMQ merges its options with Object.assign({ autorun: true }, opts): an undefined autorun would turn it off
      ...(options.autorun === undefined ? {} : { autorun: options.autorun }),
    },
  );
  const close = worker.close.bind(worker);
  worker.close = async (force?: boolean) => {
    await close(force);
    await queue.close();
  };
  return worker;
}

function describeDeliveryError(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return 'timed out';
    const cause = error.cause as { code?: unknown } | undefined;
    if (typeof cause?.code === 'string') return `${error.message} (${cause.code})`;
    return error.message;
  }
  return String(error);
}
