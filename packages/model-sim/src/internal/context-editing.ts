import type {
  BetaContextManagementConfig,
  BetaContextManagementResponse,
  BetaMessageParam,
  BetaTextBlockParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { estimateTokens, previewClearing } from '@baton/context-config';

/**
 * Server-side context editing, emulated with the same preview the rest of Baton uses, so the
 * `input_tokens` the simulator reports are exactly what `previewClearing` predicts.
 */
export interface EditedContext {
  /** The history as the model sees it. */
  messages: BetaMessageParam[];
  inputTokensBefore: number;
  inputTokensAfter: number;
  /** null when the request sent no `context_management` (the API's field is null then). */
  response: BetaContextManagementResponse | null;
}

export function applyContextEditing(options: {
  messages: BetaMessageParam[];
  system: unknown;
  tools: unknown;
  contextManagement: unknown;
}): EditedContext {
  const config =
    typeof options.contextManagement === 'object' && options.contextManagement !== null
      ? (options.contextManagement as BetaContextManagementConfig)
      : undefined;
  const preview = previewClearing({
    messages: options.messages,
    config,
    ...(options.system !== undefined && options.system !== null
      ? { system: options.system as string | BetaTextBlockParam[] }
      : {}),
    ...(Array.isArray(options.tools) ? { tools: options.tools as unknown[] } : {}),
  });
  return {
    messages: preview.messages,
    inputTokensBefore: preview.inputTokensBefore,
    inputTokensAfter: preview.inputTokensAfter,
    response: config ? { applied_edits: preview.appliedEdits } : null,
  };
}

/** Output tokens of what the agent generates (at least 1, as the API never reports 0). */
export function estimateOutputTokens(content: unknown): number {
  return Math.max(1, estimateTokens(content));
}
