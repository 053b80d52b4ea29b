import type {
  BetaContentBlock,
  BetaContentBlockParam,
  BetaMessageParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { TextLabel } from './transcript-recorder.js';

/** Told about every block queued, with the label of a text block (for the transcript). */
export type QueuedListener = (blocks: readonly BetaContentBlockParam[], label?: TextLabel) => void;

/**
 * The history of one session: the messages sent so far and the user blocks (tool results,
 * notes) waiting to go with the next request.
 */
export class Conversation {
  #messages: BetaMessageParam[] = [];
  #pending: BetaContentBlockParam[] = [];
  readonly #onQueued: QueuedListener | undefined;

  constructor(onQueued?: QueuedListener) {
    this.#onQueued = onQueued;
  }

  /** The history as the next request sends it. */
  get messages(): readonly BetaMessageParam[] {
    return this.#messages;
  }

  /** Queues user blocks for the next request. */
  add(...blocks: BetaContentBlockParam[]): void {
    this.#queue(blocks);
  }

  /** Queues a text block for the next request; `label` says where it came from. */
  addText(text: string, label?: TextLabel): void {
    this.#queue([{ type: 'text', text }], label);
  }

  #queue(blocks: BetaContentBlockParam[], label?: TextLabel): void {
    this.#pending.push(...blocks);
    this.#onQueued?.(blocks, label);
  }

  /** Moves the queued blocks into the history as one user message. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const last = this.#messages[this.#messages.length - 1];
    if (last?.role === 'user') {
      // Two user messages in a row are invalid: an aborted request leaves one behind.
      const existing: BetaContentBlockParam[] =
        typeof last.content === 'string'
          ? [{ type: 'text', text: last.content }]
          : [...last.content];
      this.#messages[this.#messages.length - 1] = {
        role: 'user',
        content: [...existing, ...this.#pending],
      };
    } else {
      this.#messages.push({ role: 'user', content: this.#pending });
    }
    this.#pending = [];
  }

  /** Appends a response's content; the API accepts its own output blocks as input. */
  addAssistant(content: readonly BetaContentBlock[]): void {
    if (content.length === 0) return;
    this.#messages.push({
      role: 'assistant',
      content: content as unknown as BetaContentBlockParam[],
    });
  }

  /** Replaces the sent history (with the clearing a response reported, mirrored). */
  replaceHistory(messages: readonly BetaMessageParam[]): void {
    if (messages !== this.#messages) this.#messages = [...messages];
  }

  /** Drops the history and the queue: the next request starts from a fresh context. */
  reset(): void {
    this.#messages = [];
    this.#pending = [];
  }
}
