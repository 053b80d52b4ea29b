// Public surface of @baton/projects.
export {
  AUTH_REASON,
  CHECKPOINT_FAILED_REASON,
  CONTEXT_FULL_REASON,
  DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS,
  MODEL_NOT_FOUND_REASON,
  NO_PROGRESS_REASON,
  OPERATOR_PAUSE_REASON,
  apiPauseReason,
  contextFullReason,
  decideAfterSession,
  exhaustedBudget,
  isFailedSession,
  nextSessionKind,
  noProgressReason,
  sessionProgress,
} from './chaining.js';
export type {
  AbortReason,
  ChainCause,
  ChainDecision,
  ChainInput,
  NextSessionKind,
} from './chaining.js';
export { CHAIN_POLICIES } from './chain-policies.js';
export type { ChainPolicy } from './chain-policies.js';
export { createBatonControl } from './control.js';
export { FileProjectLog, createFileProjectLog, openFileProjectLog } from './file-project-log.js';
export { projectContext, withContextPreset } from './control/new-project.js';
export type { FileProjectLogOptions, ProjectSettings } from './file-project-log.js';
export { FILE_PROJECT_RECORD_VERSION, fileProjectPaths } from './file-project-paths.js';
export type { FileProjectPaths } from './file-project-paths.js';
export { migrateFileProjects } from './file-migrations.js';
export type {
  LoggedEvent,
  NewProjectRecord,
  ProjectLog,
  SessionEndOptions,
  TransitionOptions,
} from './project-log.js';
export { SessionChain, createSessionChain } from './chain/session-chain.js';
export type {
  ChainControl,
  ChainEvent,
  ChainedSessionOutcome,
  ChainedSessionRequest,
  SessionChainOptions,
} from './chain/chain-types.js';
export { SessionControl } from './chain/session-control.js';
export type { ChainLogger } from './chain/chain-logger.js';
export { sessionBudgets } from './chain/session-results.js';
export type { SessionRunner } from './chain/session-results.js';
export {
  SOURCE_POLICY_ENV,
  cannotRead,
  createSourcePolicy,
  isInternalHost,
  sourcePolicyFromEnvironment,
} from './source-policy.js';
export type { SourcePolicy, SourcePolicyDefaults, SourcePolicyOptions } from './source-policy.js';
export type {
  BatonControl,
  BatonControlOptions,
  CancelResult,
  FollowEventsOptions,
  PauseResult,
  ProjectEvents,
  WaitForEventsOptions,
} from './control.js';
export {
  GUIDANCE_KEPT,
  GUIDANCE_MAX_CHARACTERS,
  createRedisGuidance,
  operatorCancel,
  operatorPause,
  parseGuidanceText,
} from './operator.js';
export type { ProjectGuidance, StoredGuidance } from './operator.js';
export { createFileGuidance } from './file-guidance.js';
export { ProjectError, describeError, isProjectError } from './errors.js';
export type { ProjectErrorCode, ProjectErrorOptions } from './errors.js';
export {
  PROJECT_EVENT_TYPES,
  decodeProjectEvent,
  decodeProjectEventJson,
} from './event-decoder.js';
export type {
  KnownProjectEvent,
  ProjectEvent,
  ProjectEventOf,
  UnknownProjectEvent,
} from './event-decoder.js';
export type { EventEntry, StreamEvent, WorkerEvent } from './events.js';
export {
  PROJECT_PAGE_DEFAULT_LIMIT,
  PROJECT_PAGE_MAX_LIMIT,
  PROJECT_SEARCH_MAX_CHARACTERS,
  parseProjectPageQuery,
  projectPageCursor,
  projectPageQuerySchema,
} from './project-page.js';
export {
  DEFAULT_PREFIX,
  PROJECT_SORTS,
  MAINTENANCE_QUEUE_NAME,
  SESSION_QUEUE_NAME,
  createKeys,
  isValidPrefix,
  memoryPrefixOf,
  prefixProblem,
} from './keys.js';
export type { BatonKeys, ProjectSort } from './keys.js';
export {
  acquireProjectLease,
  leaseRenewalIntervalMs,
  sessionCommandTimeoutMs,
  startLeaseHeartbeat,
} from './lease.js';
export type {
  AcquireLeaseResult,
  LeaseHeartbeatOptions,
  LeaseOptions,
  ProjectLease,
} from './lease.js';
export {
  MODEL_ID_PATTERN,
  MODEL_ID_RULE,
  modelIdSchema,
  parseModelId,
  PROJECT_BUDGET_RULES,
  PROJECT_ID_PATTERN,
  PROJECT_ID_RULE,
  PROJECT_STATUSES,
  PROJECT_TRANSITIONS,
  RUNNABLE_STATUSES,
  SESSION_BUDGET_RULES,
  VERIFICATION_SECONDS_RULE,
  emptyCounters,
  formatIssues,
  isTerminalStatus,
  isValidProjectId,
  parseProjectInput,
  projectIdSchema,
  projectInputSchema,
  projectVerificationSchema,
} from './project.js';
export type {
  ActiveSessionInfo,
  ProjectBudgets,
  ProjectContextPreset,
  ProjectCounters,
  ProjectInput,
  ProjectRecord,
  ProjectSourceFields,
  ProjectStatus,
  ProjectVerification,
  SessionBudgetsInput,
  StatusTransition,
} from './project.js';
export { ProjectRepository } from './project-repository.js';
export type { ProjectFence } from './internal/write-batch.js';
export { isRefusedBeforeRunning, retryRefused } from './internal/refused-retry.js';
export type {
  FeatureFlip,
  ProjectChanges,
  ProjectCounts,
  ProjectPage,
  ProjectPageQuery,
  ProjectRepositoryOptions,
  ReadEventsOptions,
  SessionCheckpointSummary,
  SessionSummary,
  SessionProgress,
  SessionWindow,
  StatusChange,
  TransitionResult,
} from './project-repository.js';
export { createRedisTranscripts, deleteTranscripts } from './transcripts.js';
export type { RedisTranscriptsOptions } from './transcripts.js';
export { createModelRateLimiter, rateLimitedFetch } from './rate-limiter.js';
export type { ModelRateLimiter, ModelRateLimiterOptions } from './rate-limiter.js';
export {
  DEFAULT_REDIS_URL,
  RedisTargetError,
  answersPing,
  closeRedisConnection,
  createRedisConnection,
  describeRedisTarget,
  duplicateConnection,
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
} from '@baton/storage-redis';
export {
  REQUIRED_EVICTION_POLICY,
  checkDeploymentMarker,
  describeLostDeployment,
  ensureDeploymentMarker,
  evictionProblem,
  readDeploymentMarker,
  readEvictionPolicies,
  type DeploymentCheck,
  type DeploymentMarker,
  type DeploymentMarkerResult,
  type EvictionPolicy,
} from './redis-safety.js';
export {
  REDIS_MIGRATIONS,
  type MigrationContext,
  type RedisMigration,
} from './migrations/redis-migrations.js';
export {
  newerDataError,
  readMigrationState,
  runRedisMigrations,
  type MigrationNotice,
  type MigrationState,
  type RunRedisMigrationsOptions,
} from './migrations/run-migrations.js';
export {
  findStuck,
  reconcileProjects,
  type ReconcileAction,
  type ReconcileOptions,
  type StuckProject,
} from './reconcile.js';
export {
  findProjectProblems,
  type FindProblemsOptions,
  type ProjectProblem,
  type ProjectProblems,
} from './control/problems.js';
export { createSessionQueue, enqueueSession, sessionJobId } from './session-queue.js';
export type { SessionJobData, SessionJobReason, SessionQueueOptions } from './session-queue.js';
export {
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_OUTPUT_CHARS,
  buildWebhookPayload,
  webhookEventType,
  webhookProjectSnapshot,
  type RegressedFeature,
  type WebhookEventType,
  type WebhookPayload,
  type WebhookProjectSnapshot,
  type WebhookTrigger,
} from './webhooks/payload.js';
export {
  WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_HEADERS,
  WEBHOOK_SECRET_PREFIX,
  createWebhookSigner,
  signWebhookBody,
  verifyWebhookSignature,
  webhookMessageId,
  webhookSigningKey,
} from './webhooks/signature.js';
export {
  WEBHOOK_QUEUE_NAME,
  createWebhookQueue,
  createWebhookWorker,
  notifyFeatureRegressed,
  notifyStatusChange,
  webhookTarget,
  type WebhookDeliveryRecord,
  type WebhookJobData,
  type WebhookQueueOptions,
  type WebhookWorkerOptions,
} from './webhooks/webhook-delivery.js';
export { projectChecksReport, type ProjectChecksReport } from './checks-report.js';
