import { execPipeline } from '../internal/pipeline.js';
import type { BatonKeys } from '../keys.js';
import type { RedisClient } from '@baton/storage-redis';
import type { WebhookDeliveryRecord } from '../webhooks/webhook-delivery.js';
import type { ProjectEventStreams } from './event-stream.js';

/** Each project's latest webhook delivery outcomes: a capped list, newest first. */
export class WebhookDeliveries {
  readonly #redis: RedisClient;
  readonly #keys: BatonKeys;
  readonly #events: ProjectEventStreams;
  readonly #maxDeliveries: number;

  constructor(options: {
    redis: RedisClient;
    keys: BatonKeys;
    events: ProjectEventStreams;
    maxDeliveries: number;
  }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#events = options.events;
    this.#maxDeliveries = options.maxDeliveries;
  }

  /**
   * Stores a webhook delivery's outcome (newest first, capped) and publishes it as a
   * `webhook-delivery` event, for `baton status`, `baton logs` and the dashboard.
   */
  async record(record: WebhookDeliveryRecord): Promise<void> {
    const key = this.#keys.webhookDeliveries(record.projectId);
    const pipeline = this.#redis.pipeline();
    pipeline.lpush(key, JSON.stringify(record));
    pipeline.ltrim(key, 0, this.#maxDeliveries - 1);
    await execPipeline(pipeline);
    await this.#events.append(record.projectId, {
      v: 1,
      type: 'webhook-delivery',
      at: record.at,
      projectId: record.projectId,
      notificationId: record.notificationId,
      webhookType: record.type,
      target: record.target,
      ok: record.ok,
      attempts: record.attempts,
      status: record.status,
      error: record.error,
    });
  }

  /** The project's latest outcomes, newest first. */
  async list(projectId: string): Promise<WebhookDeliveryRecord[]> {
    const entries = await this.#redis.lrange(this.#keys.webhookDeliveries(projectId), 0, -1);
    return entries.map((entry) => JSON.parse(entry) as WebhookDeliveryRecord);
  }
}
