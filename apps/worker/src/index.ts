export { decideAfterSession, exhaustedBudget, isFailedSession } from './chaining.js';
export type { AbortReason, ChainDecision, ChainInput } from './chaining.js';
export { DEFAULT_MODEL, loadWorkerConfig, redactRedisUrl } from './config.js';
export type { WorkerConfig } from './config.js';
export { createBatonControl } from './control.js';
export type {
  BatonControl,
  BatonControlOptions,
  CancelResult,
  FollowEventsOptions,
  ProjectEvents,
  WaitForEventsOptions,
} from './control.js';
export { WorkerError, describeError, isWorkerError } from './errors.js';
export type { WorkerErrorCode, WorkerErrorOptions } from './errors.js';
export type { EventEntry, StreamEvent, WorkerEvent } from './events.js';
export { startWorkerHttpServer } from './http-server.js';
export type { WorkerHttpServer, WorkerHttpServerOptions } from './http-server.js';
export {
  DEFAULT_PREFIX,
  MAINTENANCE_QUEUE_NAME,
  SESSION_QUEUE_NAME,
  createKeys,
  isValidPrefix,
} from './keys.js';
export type { BatonKeys } from './keys.js';
export { acquireProjectLease, startLeaseHeartbeat } from './lease.js';
export type { AcquireLeaseResult, LeaseOptions, ProjectLease } from './lease.js';
export { createLogger } from './logger.js';
export { createWorkerMetrics } from './metrics.js';
export type { WorkerMetrics } from './metrics.js';
export { createSessionProcessor, sessionBudgets } from './processor.js';
export type { RunningSession, SessionJobResult, SessionProcessorOptions } from './processor.js';
export {
  CONTEXT_PRESETS,
  PROJECT_ID_PATTERN,
  PROJECT_STATUSES,
  isTerminalStatus,
  parseProjectInput,
} from './project.js';
export type {
  ActiveSessionInfo,
  ProjectBudgets,
  ProjectContextPreset,
  ProjectCounters,
  ProjectInput,
  ProjectRecord,
  ProjectStatus,
  SessionBudgetsInput,
  StatusTransition,
} from './project.js';
export { ProjectRepository } from './project-repository.js';
export type {
  ProjectRepositoryOptions,
  ReadEventsOptions,
  SessionSummary,
  TransitionResult,
} from './project-repository.js';
export {
  createRedis,
  createSessionQueue,
  enqueueSession,
  memoryConnectionOptions,
  producerConnectionOptions,
  sessionJobId,
  waitForRedis,
  workerConnectionOptions,
} from './queue.js';
export type { SessionJobData, SessionJobReason } from './queue.js';
export { createModelRateLimiter, rateLimitedFetch } from './rate-limiter.js';
export type { ModelRateLimiter, ModelRateLimiterOptions } from './rate-limiter.js';
export type {
  SessionRunner,
  WorkerRunSessionOptions,
  WorkerSessionEvent,
  WorkerSessionResult,
} from './session-runner.js';
export { createBatonWorker } from './worker.js';
export type { BatonWorker, BatonWorkerOptions, MaintenanceOptions } from './worker.js';
export { startWorkerFromConfig } from './start-worker.js';
export type { RunningWorker, StartWorkerOptions } from './start-worker.js';
