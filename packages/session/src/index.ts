export { NON_STREAMING_MAX_TOKENS, runSession } from './run-session.js';
export type {
  AppliedEdit,
  ContextFullCause,
  ProjectInfo,
  RunSessionOptions,
  SessionBudgets,
  SessionCheckpointReason,
  SessionCheckpoints,
  SessionEvent,
  SessionEventType,
  SessionFallback,
  SessionKind,
  SessionOutcome,
  SessionResult,
  SessionVerification,
  TurnUsage,
} from './types.js';
export {
  TRANSCRIPT_BLOCK_MAX_CHARACTERS,
  TRANSCRIPT_SESSIONS_KEPT,
  capText,
  isTranscriptSessionId,
  summarizeTranscript,
  transcriptFromRecords,
} from './transcript.js';
export { createFileTranscriptStore } from './file-transcripts.js';
export { SEARCH_MAX_CHARACTERS, searchProject, searchTextProblem } from './search.js';
export type { SearchHit, SearchOptions, SearchResult, TranscriptReader } from './search.js';
export type { FileTranscriptStoreOptions } from './file-transcripts.js';
export type {
  Transcript,
  TranscriptBlock,
  TranscriptCap,
  TranscriptEnd,
  TranscriptHeader,
  TranscriptMessage,
  TranscriptRecord,
  TranscriptSink,
  TranscriptStore,
  TranscriptSummary,
  TranscriptTextSource,
} from './transcript.js';
export { startOtlpTracing } from './tracing/otlp.js';
export type { OtlpTracing, OtlpTracingOptions } from './tracing/otlp.js';
export type { SessionTracing } from './tracing/session-spans.js';
export { renderGuidance, renderUnacknowledgedGuidance } from './guidance.js';
export type { GuidanceSource, OperatorGuidance } from './guidance.js';
export { SessionError } from './errors.js';
export type { SessionErrorCode } from './errors.js';
export {
  FEATURES_PATH,
  FEATURES_STORE_PATH,
  MAX_CHECK_CHARS,
  PROGRESS_PATH,
  STARTUP_PATH,
  allFeaturesPass,
  countFeatures,
  flippedFeatureIds,
  formatFeatureLine,
  formatFeatures,
  normalizeFeaturesLayout,
  parseFeatures,
  readFeatures,
} from './features.js';
export type { Feature, FeatureCounts, ParsedFeatures } from './features.js';
export {
  CHECK_OUTPUT_TAIL_CHARS,
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_REGRESSION_BUDGET_MS,
  DEFAULT_REGRESSION_CHECKS_PER_SESSION,
  FEATURE_ID_VARIABLE,
  changedChecks,
  countVerification,
  featureCheckRows,
  describeEvidence,
  effectiveCheck,
  outputTail,
  pendingChecks,
} from './verification.js';
export type {
  CheckEvidence,
  CheckTrigger,
  FeatureCheckRow,
  FeatureCheckState,
  FeatureCheckStatus,
  FeatureCheckView,
  FeatureChecks,
  VerificationCounts,
  VerificationOptions,
} from './verification.js';
export {
  DEFAULT_PROGRESS_ROLLOVER,
  PROGRESS_ARCHIVE_DIR,
  PROGRESS_ARCHIVE_RULE,
  PROGRESS_ARCHIVE_STORE_DIR,
  PROGRESS_STORE_PATH,
  formatProgressLog,
  isProgressArchivePath,
  readProgressArchives,
  readProgressEntries,
  readProgressLog,
  rollOverProgressLog,
  splitProgressLog,
} from './progress-log.js';
export type {
  ProgressArchive,
  ProgressEntry,
  ProgressRollover,
  ProgressRolloverOptions,
  SplitProgressLog,
} from './progress-log.js';
export { buildOrientation, readOrientationSnapshot, renderOrientation } from './orientation.js';
export type { OrientationOptions, OrientationSnapshot } from './orientation.js';
export { CHECKLIST_RULE, checkChecklistWrite } from './checklist-rules.js';
export type { ChecklistRuleOptions } from './checklist-rules.js';
export {
  composeBeforeWrite,
  createChecklistGuard,
  createRedactionHook,
} from './checklist-guard.js';
export type { ChecklistGuardOptions } from './checklist-guard.js';
export { SECRET_PATTERNS, containsSecret, redactSecrets } from '@baton/core';
export type { RedactionResult, SecretPattern } from '@baton/core';
export {
  firstUserMessageSections,
  loadPrompt,
  renderEndOfSessionPrompt,
  renderFirstUserMessage,
  renderSessionPrompt,
  renderSystemPrompt,
} from './prompts.js';
export type {
  FirstMessageKind,
  FirstMessageOptions,
  FirstUserMessageSections,
  PromptContext,
  PromptName,
} from './prompts.js';
export {
  DEFAULT_RETRY_OPTIONS,
  classifyFailure,
  isOverloaded,
  parseRetryAfter,
  retryDelayMs,
  withRetries,
} from './retry.js';
export type { RetryNotice, RetryOptions } from './retry.js';
export { createBashTool } from './tools/bash.js';
export type { BashToolOptions } from './tools/bash.js';
export { createTextEditorTool } from './tools/text-editor.js';
export type { TextEditorToolOptions } from './tools/text-editor.js';
export { createSessionMemoryTool } from './tools/memory.js';
export type { SessionMemoryToolOptions } from './tools/memory.js';
export type { SessionTool, ToolOutcome, WorkspaceToolsOptions } from './tools/types.js';
export {
  BATON_COMMITS_REFUSAL,
  DEFAULT_ALLOWED_PATHS,
  DEFAULT_DENIED_COMMANDS,
  SANDBOXED_DENIED_COMMANDS,
} from './internal/command-policy.js';
export type { CommandContext, CommandPolicy } from './internal/command-policy.js';
export { buildUserTurn, noteBlock } from './user-turn.js';
export {
  MCP_CONFIG_ENV_VARIABLE,
  MCP_SERVER_NAME_PATTERN,
  describeMcpServer,
  loadMcpConfigFile,
  mcpConfigReferences,
  mcpConfigSchema,
  mergeMcpConfigs,
  parseMcpConfig,
  parseMcpConfigText,
  resolveMcpServer,
} from './mcp/config.js';
export type {
  McpConfig,
  McpConfigSource,
  McpHttpServer,
  McpServerConfig,
  McpServerEntry,
  McpStdioServer,
} from './mcp/config.js';
export {
  DEFAULT_MCP_CALL_TIMEOUT_MS,
  DEFAULT_MCP_START_TIMEOUT_MS,
  mcpToolName,
  startMcpServers,
} from './mcp/mcp-servers.js';
export type { McpServerStatus, McpSession, StartMcpServersOptions } from './mcp/mcp-servers.js';
export {
  BUNDLED_MCP_PACKAGES,
  CHROMIUM_SANDBOX_FLAGS,
  SYSTEM_CHROMIUM,
} from './mcp/bundled-servers.js';
