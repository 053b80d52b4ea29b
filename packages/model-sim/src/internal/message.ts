import type {
  BetaAssistantMessageParam,
  BetaContentBlock,
  BetaContextManagementResponse,
  BetaMessage,
  BetaRawMessageStreamEvent,
  BetaRefusalStopDetails,
  BetaStopReason,
  BetaUsage,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { CacheBill } from './prompt-cache.js';

/** Blocks the simulator produces: plain text and client tool calls. */
export type SimBlock =
  | { type: 'text'; text: string }
  | {
      type: 'tool_use';
      id: string;
      name: string;
      input: unknown;
      /** Input JSON cut off by a limit: streamed as is (the SDK parses it partially). */
      partialJson?: string;
    };

export interface BuildMessageOptions {
  id: string;
  model: string;
  blocks: SimBlock[];
  stopReason: BetaStopReason;
  /** Uncached input tokens (after the last cache read or write). */
  inputTokens: number;
  /** What the prompt cache read and wrote; none when absent. */
  cache?: CacheBill;
  outputTokens: number;
  contextManagement: BetaContextManagementResponse | null;
  stopDetails?: BetaRefusalStopDetails | null;
}

export function refusalDetails(): BetaRefusalStopDetails {
  return {
    type: 'refusal',
    category: null,
    explanation: 'The simulator was told to refuse this request (refusal fault).',
    fallback_credit_token: null,
    fallback_has_prefill_claim: null,
    recommended_model: null,
  };
}

function usage(inputTokens: number, outputTokens: number, cache: CacheBill | undefined): BetaUsage {
  const write5m = cache?.write5mInputTokens ?? 0;
  const write1h = cache?.write1hInputTokens ?? 0;
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: write5m + write1h,
    cache_read_input_tokens: cache?.readInputTokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: write5m, ephemeral_1h_input_tokens: write1h },
    fallback_credit: null,
    inference_geo: null,
    iterations: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    speed: null,
  };
}

function toContentBlock(block: SimBlock): BetaContentBlock {
  if (block.type === 'text') return { type: 'text', text: block.text, citations: null };
  return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
}

/** Where a tool call's input was cut, by tool_use id, so the stream sends the cut JSON. */
const partialInputs = new WeakMap<BetaMessage, Map<string, string>>();

export function buildMessage(options: BuildMessageOptions): BetaMessage {
  const message = buildFullMessage(options);
  const cut = new Map<string, string>();
  for (const block of options.blocks) {
    if (block.type === 'tool_use' && block.partialJson !== undefined)
      cut.set(block.id, block.partialJson);
  }
  if (cut.size > 0) partialInputs.set(message, cut);
  return message;
}

function buildFullMessage(options: BuildMessageOptions): BetaMessage {
  return {
    id: options.id,
    type: 'message',
    role: 'assistant',
    model: options.model,
    content: options.blocks.map(toContentBlock),
    stop_reason: options.stopReason,
    stop_sequence: null,
    stop_details: options.stopDetails ?? null,
    container: null,
    context_management: options.contextManagement,
    diagnostics: null,
    usage: usage(options.inputTokens, options.outputTokens, options.cache),
  };
}

/** The reply as a message param, for storing in a thread. */
export function toMessageParam(message: BetaMessage): BetaAssistantMessageParam {
  return {
    role: 'assistant',
    content: message.content.map((block) =>
      block.type === 'text'
        ? { type: 'text' as const, text: block.text }
        : block.type === 'tool_use'
          ? { type: 'tool_use' as const, id: block.id, name: block.name, input: block.input }
          : block,
    ) as BetaAssistantMessageParam['content'],
  };
}

/** Splits text into chunks of roughly `size` characters, the way a model streams tokens. */
function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let start = 0; start < text.length; start += size) out.push(text.slice(start, start + size));
  return out.length > 0 ? out : [''];
}

export type StreamEvent = BetaRawMessageStreamEvent | { type: 'ping' };

/**
 * The SSE events of a message in the API's order: message_start (empty content, output_tokens
 * 1), a ping, per block content_block_start / deltas / content_block_stop, message_delta with the
 * stop reason, full usage and context_management, message_stop.
 */
export function streamEvents(message: BetaMessage): StreamEvent[] {
  const events: StreamEvent[] = [];
  events.push({
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_details: null,
      context_management: null,
      usage: { ...message.usage, output_tokens: 1 },
    },
  });
  events.push({ type: 'ping' });
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { ...block, text: '' } });
      for (const text of chunks(block.text, 48)) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      }
    } else if (block.type === 'tool_use') {
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: '' },
      });
      const json = partialInputs.get(message)?.get(block.id) ?? JSON.stringify(block.input ?? {});
      for (const partial of chunks(json, 64)) {
        events.push({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: partial },
        });
      }
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({
    type: 'message_delta',
    delta: {
      stop_reason: message.stop_reason,
      stop_sequence: null,
      stop_details: message.stop_details,
      container: null,
    },
    usage: {
      input_tokens: message.usage.input_tokens,
      output_tokens: message.usage.output_tokens,
      cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
      cache_read_input_tokens: message.usage.cache_read_input_tokens,
      server_tool_use: null,
      fallback_credit: null,
      iterations: null,
      output_tokens_details: null,
    },
    context_management: message.context_management,
  });
  events.push({ type: 'message_stop' });
  return events;
}

export function formatSse(event: StreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
