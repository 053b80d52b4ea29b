import type {
  BetaMessage,
  BetaMessageParam,
  BetaToolUnion,
  BetaToolUseBlock,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { redactThenCut } from '@baton/core';
import { withCacheBreakpoints } from '@baton/context-config';
import { type RetryOptions, classifyFailure, isOverloaded, withRetries } from '../retry.js';
import type { RunSessionOptions, SessionFallback } from '../types.js';
import type { EventBody } from './events.js';
import { type PhaseStop, errorMessage } from './phase-stop.js';

const DEFAULT_MAX_TOKENS = 4096;

/**
 * The largest `max_tokens` the SDK accepts without streaming: it refuses a non-streaming call
 * whose expected time (60 min x max_tokens / 128,000) exceeds 10 minutes.
 */
export const NON_STREAMING_MAX_TOKENS = 21_333;

/** The most output room a cut tool call is retried with. */
const MAX_TOKENS_CEILING = 32_000;

/** What the next request sends: read at each build, so a retry sends the history as it is. */
export interface Prompt {
  system: string;
  tools: BetaToolUnion[];
  messages: readonly BetaMessageParam[];
}

/** Options of `ModelClient`, from `RunSessionOptions`. */
export interface ModelClientOptions {
  client: RunSessionOptions['client'];
  model: string;
  fallbackModel: string | undefined;
  /** `max_tokens` of the first request. Default `DEFAULT_MAX_TOKENS`. */
  maxTokens: number | undefined;
  /** Default true. */
  streaming: boolean | 'auto' | undefined;
  retry: RetryOptions | undefined;
  context: NonNullable<RunSessionOptions['context']>;
  emit: (body: EventBody) => Promise<void>;
}

export function isToolUse(block: BetaMessage['content'][number]): block is BetaToolUseBlock {
  return block.type === 'tool_use';
}

/**
 * What an API error (after the retries) means for the phase: a prompt over the context window is
 * a full context, not a failure; a refused key (401/403) and an unknown model (404) have their
 * own verdicts; anything else is an API error.
 */
export function stopForApiError(error: unknown, turn: number): PhaseStop {
  const failure = classifyFailure(error);
  const message = errorMessage(error);
  const tooLong = /prompt is too long: (\d+) tokens > (\d+) maximum/i.exec(message);
  if (failure.status === 400 && (tooLong !== null || /prompt is too long/i.test(message))) {
    return {
      kind: 'context_window',
      turn,
      cause: 'prompt_too_long',
      promptTokens: tooLong === null ? null : Number(tooLong[1]),
      contextWindow: tooLong === null ? null : Number(tooLong[2]),
    };
  }
  if (failure.status === 401 || failure.status === 403) return { kind: 'auth', error };
  if (failure.status === 404 && apiErrorType(error) === 'not_found_error') {
    return { kind: 'model_not_found', error };
  }
  return { kind: 'api_error', error };
}

/** The `error.type` of an API error body, or ''. */
function apiErrorType(error: unknown): string {
  const body = (error as { error?: { error?: { type?: unknown } } } | null)?.error;
  return typeof body?.error?.type === 'string' ? body.error.type : '';
}

/**
 * The session's requests to the Messages API: how each is built (cache breakpoints, betas,
 * context management), our retries, the fallback model once the model stayed overloaded, and
 * the output room (raised when a tool call was cut for want of it).
 */
export class ModelClient {
  readonly #options: ModelClientOptions;
  readonly #streaming: boolean | 'auto';
  /** The model requests go to: `options.model`, or the fallback model once it stayed overloaded. */
  #model: string;
  #fallback: SessionFallback | undefined;
  /** `max_tokens` of the next request: raised when a tool call was cut for want of room. */
  #maxTokens: number;

  constructor(options: ModelClientOptions) {
    this.#options = options;
    this.#model = options.model;
    this.#maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.#streaming = options.streaming ?? true;
  }

  /** The model the next request names. */
  get model(): string {
    return this.#model;
  }

  /** Set once the session moved to the fallback model. */
  get fallback(): SessionFallback | undefined {
    return this.#fallback;
  }

  /** The `max_tokens` requests are sent with now. */
  get outputRoom(): number {
    return this.#maxTokens;
  }

  /**
   * One API call with our own retries; when the model is still overloaded after them and a
   * fallback model is set, the call (and the rest of the session) goes to the fallback model.
   * `turn` is the turn this request answers (for the fallback's event).
   */
  async request(prompt: () => Prompt, signal: AbortSignal, turn: number): Promise<BetaMessage> {
    try {
      return await this.#requestWithRetries(prompt(), signal);
    } catch (error) {
      const fallback = this.#options.fallbackModel;
      if (fallback === undefined || this.#fallback !== undefined || signal.aborted) throw error;
      if (fallback === this.#model || !isOverloaded(error)) throw error;
      this.#fallback = { from: this.#model, to: fallback, turn, at: Date.now() };
      const status = classifyFailure(error).status;
      await this.#options.emit({
        type: 'model-fallback',
        from: this.#model,
        to: fallback,
        turn,
        message: redactThenCut(errorMessage(error), 200),
        status,
      });
      this.#model = fallback;
      return this.#requestWithRetries(prompt(), signal);
    }
  }

  /**
   * A tool call cut by max_tokens is never run: the reply is dropped and the same request goes
   * again with twice the output room, up to `MAX_TOKENS_CEILING`. False when there is no more
   * room to give (the model is then told to split the call).
   */
  retryCutToolCall(response: BetaMessage, stopReason: string): boolean {
    if (stopReason !== 'max_tokens' || !response.content.some(isToolUse)) return false;
    const ceiling = Math.max(this.#options.maxTokens ?? DEFAULT_MAX_TOKENS, MAX_TOKENS_CEILING);
    if (this.#maxTokens >= ceiling) return false;
    this.#maxTokens = Math.min(ceiling, this.#maxTokens * 2);
    return true;
  }

  /** Stream when asked to, or (`auto`) when `max_tokens` is above the SDK's non-streaming limit. */
  #streams(): boolean {
    return (
      this.#streaming === true ||
      (this.#streaming === 'auto' && this.#maxTokens > NON_STREAMING_MAX_TOKENS)
    );
  }

  /** The request of the next turn, as the API takes it, with its cache breakpoints placed. */
  #buildRequest(prompt: Prompt): MessageCreateParamsNonStreaming {
    const context = this.#options.context;
    const { breakpoints: _placed, ...cached } = withCacheBreakpoints(
      { system: prompt.system, tools: prompt.tools, messages: [...prompt.messages] },
      context.promptCache,
    );
    return {
      model: this.#model,
      max_tokens: this.#maxTokens,
      ...cached,
      ...(context.betas.length > 0 ? { betas: context.betas } : {}),
      // eslint-disable-next-line no-restricted-syntax -- the SDK's `context_management?: BetaContextManagementConfig | null` refuses undefined
      ...(context.context_management === undefined
        ? {}
        : { context_management: context.context_management }),
    };
  }

  /** One API call with our own retry loop, which reports every retry as an `api-retry` event. */
  #requestWithRetries(prompt: Prompt, signal: AbortSignal): Promise<BetaMessage> {
    const params = this.#buildRequest(prompt);
    const requestOptions = { signal, maxRetries: 0 };
    const client = this.#options.client;
    return withRetries(
      (): Promise<BetaMessage> =>
        this.#streams()
          ? client.beta.messages.stream(params, requestOptions).finalMessage()
          : client.beta.messages.create(params, requestOptions),
      {
        retry: this.#options.retry,
        signal,
        onRetry: (notice) =>
          this.#options.emit({
            type: 'api-retry',
            attempt: notice.attempt,
            delayMs: notice.delayMs,
            message: redactThenCut(errorMessage(notice.error), 200),
            status: notice.status,
          }),
      },
    );
  }
}
