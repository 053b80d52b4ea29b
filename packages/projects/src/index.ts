// Public surface of @baton/projects.
export {
  DEFAULT_REDIS_URL,
  RedisTargetError,
  answersPing,
  createRedisConnection,
  describeRedisTarget,
  isCluster,
  memoryConnectionOptions,
  parseClusterNodes,
  parseRedisUrl,
  producerConnectionOptions,
  readRedisTarget,
  redactUrl,
  redisTargetEnvironment,
  waitForRedis,
  workerConnectionOptions,
  type ConnectionTuning,
  type RedisClient,
  type RedisClusterNode,
  type RedisTarget,
} from './redis-connection.js';
export {
  WEBHOOK_EVENT_TYPES,
  buildWebhookPayload,
  webhookEventType,
  type WebhookEventType,
  type WebhookPayload,
  type WebhookProjectSnapshot,
  type WebhookTrigger,
} from './webhooks/payload.js';
export {
  WEBHOOK_SIGNATURE_HEADER,
  signWebhookBody,
  verifyWebhookSignature,
} from './webhooks/signature.js';
export {
  WEBHOOK_QUEUE_NAME,
  createWebhookQueue,
  createWebhookWorker,
  notifyStatusChange,
  webhookTarget,
  type WebhookDeliveryRecord,
  type WebhookJobData,
  type WebhookQueueOptions,
  type WebhookWorkerOptions,
} from './webhooks/webhook-delivery.js';
