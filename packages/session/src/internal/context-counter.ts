import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { estimateInputTokens } from '@baton/context-config';
import { type PromptContext, renderEndOfSessionPrompt } from '../prompts.js';
import type { RunSessionOptions } from '../types.js';
import type { PhaseStop } from './phase-stop.js';

/**
 * What the context counter keeps free, beyond the end-of-session prompt, for the working phase's
 * last reply (usually a short summary) before the end-of-session turn. A longer reply moves the
 * end-of-session turn to a fresh context (the counter checks that phase too).
 */
const END_OF_SESSION_REPLY_ROOM = 512;

/** Options of `ContextCounter`. */
export interface ContextCounterOptions {
  client: RunSessionOptions['client'];
  /** The context window of every model; undefined: asked of the Models API. */
  contextWindow: number | undefined;
  promptContext: PromptContext;
}

/**
 * The context counter: the next request's input is the last request's, as the API counted it,
 * plus what was added since (the reply and the new user turn, by Baton's estimate). When that
 * and `max_tokens` no longer fit the model's window, the request is not sent: the context is
 * full and the session hands off. Unknown window or first request: nothing to count.
 */
export class ContextCounter {
  readonly #options: ContextCounterOptions;
  /**
   * The context window of each model asked for (the `contextWindow` option, else the Models
   * API's `max_input_tokens`); null: unknown, so the session does not count.
   */
  readonly #contextWindows = new Map<string, Promise<number | null>>();
  /** The last answered request: its input tokens as the API counted them, and as Baton estimates them. */
  #lastPrompt: { tokens: number; estimate: number } | undefined;
  /** Baton's estimate of the end-of-session prompt (asked once). */
  #closingTokens: number | undefined;

  constructor(options: ContextCounterOptions) {
    this.#options = options;
  }

  /** A response to a request Baton estimated at `estimate` input tokens arrived. */
  answered(usage: BetaMessage['usage'], estimate: number): void {
    this.#lastPrompt = {
      tokens:
        usage.input_tokens +
        (usage.cache_read_input_tokens ?? 0) +
        (usage.cache_creation_input_tokens ?? 0),
      estimate,
    };
  }

  /** The conversation starts again from nothing: the next request has nothing to count from. */
  forget(): void {
    this.#lastPrompt = undefined;
  }

  /**
   * The stop when the next request (`estimate()` by Baton's count, `maxTokens` of output and
   * `reserve` besides) would not fit `model`'s window; `turn` is the turn it would answer.
   */
  async wouldOverflow(next: {
    model: string;
    estimate: () => number;
    maxTokens: number;
    reserve: number;
    turn: number;
  }): Promise<PhaseStop | undefined> {
    const last = this.#lastPrompt;
    if (last === undefined) return undefined;
    const window = await this.#contextWindowOf(next.model);
    if (window === null) return undefined;
    const tokens = last.tokens + Math.max(0, next.estimate() - last.estimate);
    if (tokens + next.maxTokens + next.reserve <= window) return undefined;
    return {
      kind: 'context_window',
      turn: next.turn,
      cause: 'counter',
      promptTokens: tokens,
      contextWindow: window,
    };
  }

  /**
   * Room the working phase keeps for the end-of-session turn, so that the agent can still close
   * its log in the same conversation when the work stops: the closing prompt (by
   * `estimateInputTokens`) and `END_OF_SESSION_REPLY_ROOM` for the last working reply. Its own
   * reply has the `max_tokens` every request reserves.
   */
  endOfSessionReserve(): number {
    this.#closingTokens ??= estimateInputTokens({
      system: '',
      tools: [],
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: renderEndOfSessionPrompt('max_output_tokens', this.#options.promptContext),
            },
          ],
        },
      ],
    });
    return this.#closingTokens + END_OF_SESSION_REPLY_ROOM;
  }

  /** The context window of `model`, asked once; null when neither the option nor the API says. */
  #contextWindowOf(model: string): Promise<number | null> {
    const known = this.#contextWindows.get(model);
    if (known !== undefined) return known;
    const asked =
      this.#options.contextWindow !== undefined
        ? Promise.resolve(this.#options.contextWindow)
        : this.#options.client.models
            .retrieve(model, {}, { maxRetries: 1, timeout: 30_000 })
            .then((info) => info.max_input_tokens ?? null)
            .catch(() => null);
    this.#contextWindows.set(model, asked);
    return asked;
  }
}
