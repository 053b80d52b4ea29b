// The project vocabulary without Redis or BullMQ: `@baton/projects/schema`, for code that only
// validates or names things (CLI argument parsers, `--help`) and must stay quick to load.
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
  formatIssues,
  isTerminalStatus,
  isValidProjectId,
  parseProjectInput,
  projectIdSchema,
  projectInputSchema,
} from './project.js';
export type {
  ProjectBudgets,
  ProjectContextPreset,
  ProjectInput,
  ProjectSourceFields,
  ProjectStatus,
  SessionBudgetsInput,
} from './project.js';
export {
  PROJECT_PAGE_DEFAULT_LIMIT,
  PROJECT_PAGE_MAX_LIMIT,
  PROJECT_SEARCH_MAX_CHARACTERS,
  parseProjectPageQuery,
  projectPageCursor,
  projectPageQuerySchema,
} from './project-page.js';
export { PROJECT_SORTS } from './keys.js';
export type { ProjectSort } from './keys.js';
export { CONTEXT_PRESET_NAMES } from '@baton/context-config';
export {
  AUTH_REASON,
  CHECKPOINT_FAILED_REASON,
  CONTEXT_FULL_REASON,
  DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS,
  NO_PROGRESS_REASON,
  apiPauseReason,
  nextSessionKind,
  noProgressReason,
  sessionProgress,
} from './chaining.js';
export type { NextSessionKind } from './chaining.js';
export { CHAIN_POLICIES } from './chain-policies.js';
export type { ChainPolicy } from './chain-policies.js';
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
export {
  STREAM_ID_PATTERN,
  eventsQuerySchema,
  guidanceBodySchema,
  memoryDiffQuerySchema,
  memoryFileQuerySchema,
  memoryPathSchema,
  projectsQuerySchema,
  searchQuerySchema,
  sessionsQuerySchema,
  streamIdSchema,
  toStorePath,
  toVirtualPath,
  tokensQuerySchema,
} from './requests.js';
