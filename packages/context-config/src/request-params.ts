import type { AnthropicBeta } from '@anthropic-ai/sdk/resources/beta/beta';
import type { ContextManagement, ResolvedContextConfig } from './types.js';

/** The request fields a resolved config contributes; keys are absent (not undefined) when off. */
export interface ContextRequestParams {
  betas?: AnthropicBeta[];
  context_management?: ContextManagement;
}

/**
 * Fields to spread into `client.beta.messages.create({ ...contextRequestParams(config), ... })`.
 * Absent keys instead of `undefined` keep it valid under `exactOptionalPropertyTypes`; merge
 * `betas` yourself if the request needs other betas too.
 */
export function contextRequestParams(config: ResolvedContextConfig): ContextRequestParams {
  const params: ContextRequestParams = {};
  if (config.betas.length > 0) params.betas = [...config.betas];
  if (config.context_management !== undefined) {
    params.context_management = config.context_management;
  }
  return params;
}
