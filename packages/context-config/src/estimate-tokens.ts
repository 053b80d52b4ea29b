import type {
  BetaMessageParam,
  BetaTextBlockParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';

/** Characters per token in the estimate (English prose and code average about 4). */
export const CHARS_PER_TOKEN = 4;

/**
 * Deterministic token estimate used everywhere in Baton (simulator, preview, benches):
 * `ceil(chars / 4)`, where `chars` is the string's length for a string and the length of
 * `JSON.stringify(value)` for anything else (`undefined`, functions and symbols count 0).
 * It is not the real tokenizer; it is stable, cheap and the same on every machine.
 */
export function estimateTokens(value: unknown): number {
  if (value === undefined || value === null) return 0;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (typeof text !== 'string') return 0;
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** What a request's input consists of, for `estimateInputTokens`. */
export interface InputTokensRequest {
  messages: readonly BetaMessageParam[];
  system?: string | readonly BetaTextBlockParam[] | undefined;
  tools?: readonly unknown[] | undefined;
}

/**
 * Estimate of a request's input tokens: `estimateTokens` summed over the system prompt (string
 * or each block), each tool definition and each message's content (a string content, or each
 * content block). Summing per block makes it additive, so the preview can say exactly how many
 * tokens clearing one block frees, and the simulator reports the same number as `input_tokens`.
 */
export function estimateInputTokens(request: InputTokensRequest): number {
  let total = 0;
  if (typeof request.system === 'string') total += estimateTokens(request.system);
  else if (request.system !== undefined) {
    for (const block of request.system) total += estimateTokens(block);
  }
  if (request.tools !== undefined) {
    for (const tool of request.tools) total += estimateTokens(tool);
  }
  for (const message of request.messages) total += estimateMessageTokens(message);
  return total;
}

/** Estimate of one message: its string content, or the sum over its content blocks. */
export function estimateMessageTokens(message: BetaMessageParam): number {
  if (message.content === undefined) return 0;
  if (typeof message.content === 'string') return estimateTokens(message.content);
  let total = 0;
  for (const block of message.content) total += estimateTokens(block);
  return total;
}
