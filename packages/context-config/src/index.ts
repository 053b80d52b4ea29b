export type {
  ClearThinkingInput,
  ClearToolUsesInput,
  CompactionInput,
  ContextConfigInput,
  ContextManagement,
  ContextManagementEdit,
  ContextPresetName,
  PromptCacheInput,
  ResolvedContextConfig,
} from './types.js';
export {
  API_DEFAULTS,
  COMPACTION_BETA,
  CONTEXT_MANAGEMENT_BETA,
  MEMORY_TOOL_NAME,
  MIN_COMPACTION_TRIGGER_TOKENS,
} from './constants.js';
export { ContextConfigError } from './errors.js';
export type { ContextConfigErrorCode, ContextConfigIssue } from './errors.js';
export { CONTEXT_PRESETS, DEFAULT_CONTEXT_PRESET } from './presets.js';
/** The preset names, in the order tools list them (`--preset` choices, schemas). */
export { PRESET_NAMES as CONTEXT_PRESET_NAMES } from './internal/schema.js';
export type { ContextPreset } from './presets.js';
export { defineContextConfig } from './define-context-config.js';
export { contextRequestParams } from './request-params.js';
export type { ContextRequestParams } from './request-params.js';
export {
  CHARS_PER_TOKEN,
  estimateInputTokens,
  estimateMessageTokens,
  estimateTokens,
} from './estimate-tokens.js';
export type { InputTokensRequest } from './estimate-tokens.js';
export { CLEARED_TOOL_RESULT_TEXT, previewClearing } from './preview-clearing.js';
export { mirrorAppliedEdits } from './mirror-applied-edits.js';
export type {
  ClearingPreview,
  PreviewAppliedEdit,
  PreviewCacheInvalidation,
  PreviewClearingOptions,
} from './preview-clearing.js';
export {
  DEFAULT_PRICES,
  PRICED_SIM_MODEL,
  SIM_MODEL,
  estimateCostUsd,
  isSimulatedModel,
  priceForModel,
} from './prices.js';
export type { BillableUsage, ModelPrice, PriceTable } from './prices.js';
export {
  accountTurn,
  cacheHitRate,
  createUsageAccumulator,
  emptyUsageTotals,
  totalInputTokens,
} from './usage-accumulator.js';
export type {
  AppliedEdit,
  CacheInvalidation,
  TurnAccounting,
  TurnResponse,
  TurnUsage,
  UsageAccumulator,
  UsageAccumulatorOptions,
  UsageTotals,
} from './usage-accumulator.js';
export {
  CONFIG_FILE_NAME,
  CONTEXT_ENV_VARS,
  contextVariablesSet,
  loadContextConfig,
  loadContextConfigInput,
} from './load-context-config.js';
export { summarizeContextConfig } from './summarize-context-config.js';
export type { LoadContextConfigOptions } from './load-context-config.js';
export {
  CACHE_LOOKBACK_BLOCKS,
  CACHE_TTL_MS,
  MAX_CACHE_BREAKPOINTS,
  MIN_CACHEABLE_TOKENS,
  clearingCacheCost,
  minCacheableTokens,
  withCacheBreakpoints,
} from './prompt-cache.js';
export type {
  CacheTtl,
  CacheableRequest,
  ClearingCacheCost,
  PlacedBreakpoint,
  PromptCachePolicy,
  WithBreakpoints,
} from './prompt-cache.js';
