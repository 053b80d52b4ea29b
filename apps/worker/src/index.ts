// Public surface of the worker app: what `baton worker`/`baton up` and tests start a worker with.
// The project domain (schema, repository, control API, keys) is `@baton/projects`.
export {
  DEFAULT_MODEL,
  WORKER_ENV_VARIABLES,
  contextVariablesNotice,
  loadWorkerConfig,
} from './config.js';
export type { WorkerConfig } from './config.js';
export { WorkerError, describeError, isWorkerError } from './errors.js';
export type { WorkerErrorCode, WorkerErrorOptions } from './errors.js';
export { startWorkerHttpServer } from './http-server.js';
export type { WorkerHttpServer, WorkerHttpServerOptions } from './http-server.js';
export { createLogger } from './logger.js';
export { createWorkerMetrics } from './metrics.js';
export type { WorkerMetrics } from './metrics.js';
export { createSessionProcessor, sessionBudgets } from './processor.js';
export type { RunningSession, SessionJobResult, SessionProcessorOptions } from './processor.js';
export type {
  SessionRunner,
  WorkerRunSessionOptions,
  WorkerSessionEvent,
  WorkerSessionResult,
} from './session-runner.js';
export { createBatonWorker } from './worker.js';
export type { BatonWorker, BatonWorkerOptions } from './worker.js';
export type { MaintenanceOptions } from './maintenance-worker.js';
export type { WebhookOptions } from './webhook-worker.js';
export { startWorkerFromConfig } from './start-worker.js';
export { runUntilSignalled } from './run-until-signalled.js';
export type { RunUntilSignalledOptions } from './run-until-signalled.js';
export type { RunningWorker, StartWorkerOptions } from './start-worker.js';
