/**
 * Attribute names of the OpenTelemetry GenAI semantic conventions (status: development) that
 * Baton's spans carry, in one place. Copied as strings rather than imported from
 * `@opentelemetry/semantic-conventions/incubating`, as that package asks for experimental names.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  /** All input tokens: uncached + read from the cache + written to it (the convention says so). */
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
} as const;

/** `gen_ai.operation.name` values. */
export const GEN_AI_OPERATIONS = {
  chat: 'chat',
  executeTool: 'execute_tool',
  invokeAgent: 'invoke_agent',
} as const;

/** The general `error.type` attribute (stable). */
export const ERROR_TYPE = 'error.type';

/** Baton's own attributes, under `baton.`. */
export const BATON = {
  projectId: 'baton.project.id',
  sessionId: 'baton.session.id',
  sessionKind: 'baton.session.kind',
  sessionNumber: 'baton.session.number',
  sessionOutcome: 'baton.session.outcome',
  sessionStopReason: 'baton.session.stop_reason',
  sessionTurns: 'baton.session.turns',
  costUsd: 'baton.cost_usd',
  turn: 'baton.turn',
  phase: 'baton.phase',
  uncachedInputTokens: 'baton.usage.uncached_input_tokens',
  fallbackFrom: 'baton.fallback.from',
  fallbackTo: 'baton.fallback.to',
  toolSummary: 'baton.tool.summary',
} as const;
