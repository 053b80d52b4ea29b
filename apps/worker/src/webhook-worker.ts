import {
  createWebhookQueue,
  createWebhookWorker,
  notifyFeatureRegressed,
  notifyStatusChange,
  webhookProjectSnapshot,
  type BatonKeys,
  type ProjectRepository,
  type RedisClient,
  type StatusChange,
  type WebhookJobData,
} from '@baton/projects';
import type { SessionEvent } from '@baton/session';
import type { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';

/** Webhook receivers and delivery policy (`BATON_WEBHOOK_*`). */
export interface WebhookOptions {
  /** Receivers; each gets every notification. */
  urls: readonly string[];
  /** The webhook signing secret (Standard Webhooks; see docs/workers.md#webhooks). */
  secret: string;
  /** Attempts per delivery. Default 6. */
  attempts?: number | undefined;
  /** First retry delay, doubled each time (ms). Default 5000. */
  backoffMs?: number | undefined;
}

export interface WebhookWorkerOptions {
  /** Connection for BullMQ's worker (`maxRetriesPerRequest: null`). */
  workerConnection: RedisClient;
  /** Connection for queueing notifications. */
  commandConnection: RedisClient;
  keys: BatonKeys;
  /** Receivers and policy. Default: none (notifications are consumed and dropped). */
  webhooks?: WebhookOptions | undefined;
  /** Where a delivery reads its project's figures and records its outcome. */
  repository: ProjectRepository;
  logger: Logger;
}

type FeatureRegressed = Extract<SessionEvent, { type: 'feature-regressed' }>;

/**
 * Project notifications: queues them (status changes, regressed features) and delivers the
 * queued ones, whichever worker (or `baton cancel`) queued them, as signed POSTs.
 */
export class WebhookWorker {
  readonly #queue: Queue<WebhookJobData>;
  readonly #worker: Worker<WebhookJobData>;
  readonly #logger: Logger;

  constructor(options: WebhookWorkerOptions) {
    const { keys, logger, webhooks } = options;
    this.#logger = logger;
    this.#queue = createWebhookQueue({
      connection: options.commandConnection,
      prefix: keys.prefix,
    });
    this.#worker = createWebhookWorker({
      connection: options.workerConnection,
      prefix: keys.prefix,
      urls: webhooks?.urls ?? [],
      secret: webhooks?.secret ?? '',
      attempts: webhooks?.attempts,
      backoffMs: webhooks?.backoffMs,
      autorun: false,
      loadProject: async (projectId) => {
        const project = await options.repository.get(projectId);
        return project === null ? null : webhookProjectSnapshot(project);
      },
      onDelivery: async (record) => {
        const log = record.ok ? logger.info.bind(logger) : logger.warn.bind(logger);
        log({ ...record }, record.ok ? 'webhook delivered' : 'webhook delivery failed');
        await options.repository.recordWebhookDelivery(record);
      },
    });
    this.#worker.on('error', (error) => logger.error({ err: error }, 'webhook worker error'));
    this.#worker.on('failed', (job, error) => {
      if (job && job.attemptsMade < (job.opts.attempts ?? 1)) {
        logger.info({ attempt: job.attemptsMade, err: error }, 'webhook attempt failed; retrying');
      }
    });
    this.#queue.on('error', (error) => logger.warn({ err: error }, 'webhook queue error'));
  }

  /** Queues the notification of a status change; a failure is logged, never thrown. */
  async notifyStatusChange(change: StatusChange): Promise<void> {
    await notifyStatusChange(this.#queue, change).catch((error: unknown) =>
      this.#cannotQueue(change.projectId, error),
    );
  }

  /** Queues the notification of a feature whose check failed on a re-run (a failure is logged). */
  notifyFeatureRegressed(event: FeatureRegressed): void {
    const { evidence } = event;
    notifyFeatureRegressed(this.#queue, {
      projectId: event.projectId,
      at: event.at,
      feature: {
        id: event.featureId,
        check: evidence.command,
        exitCode: evidence.exitCode,
        commit: evidence.commit,
        output: evidence.outputTail,
      },
    }).catch((error: unknown) => this.#cannotQueue(event.projectId, error));
  }

  /** Starts delivering. */
  start(): void {
    void this.#worker
      .run()
      .catch((error: unknown) => this.#logger.error({ err: error }, 'webhook worker stopped'));
  }

  /** The close steps, in order: deliveries in flight get their own short timeout (an unfinished one is retried elsewhere). */
  closeSteps(): [string, () => Promise<unknown>][] {
    return [
      ['webhook worker', () => this.#worker.close(true)],
      ['webhook queue', () => this.#queue.close()],
    ];
  }

  disconnect(): void {
    void this.#worker.disconnect().catch(() => undefined);
  }

  #cannotQueue(projectId: string, error: unknown): void {
    this.#logger.warn({ projectId, err: error }, 'could not queue the webhook notification');
  }
}
