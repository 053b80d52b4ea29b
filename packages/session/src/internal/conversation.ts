import type {
  BetaContentBlock,
  BetaContentBlockParam,
  BetaMessageParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { buildUserTurn, noteBlock } from '../user-turn.js';
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

  /** Queues user blocks for the next request (tool results go first whenever they are queued). */
  add(...blocks: BetaContentBlockParam[]): void {
    this.#queue(blocks);
  }

  /**
   * Queues one of Baton's notes for the next request; `label` says where it came from. A note
   * that says nothing is dropped (the API refuses empty text blocks).
   */
  addText(text: string, label?: TextLabel): void {
    this.#queue(noteBlock(text), label);
  }

  #queue(blocks: BetaContentBlockParam[], label?: TextLabel): void {
    if (blocks.length === 0) return;
    this.#pending.push(...blocks);
    this.#onQueued?.(blocks, label);
  }

  /** True when something waits to be sent with the next request. */
  get hasPending(): boolean {
    return buildUserTurn(this.#pending).length > 0;
  }

  /** Moves the queued blocks into the history as one user message, built by `buildUserTurn`. */
  flush(): void {
    const last = this.#messages[this.#messages.length - 1];
    // Two user messages in a row are merged (the API would): an aborted request, or an empty
    // reply that was not kept, leaves one behind.
    const merging = last?.role === 'user';
    const existing: BetaContentBlockParam[] = !merging
      ? []
      : typeof last.content === 'string'
        ? noteBlock(last.content)
        : [...last.content];
    const content = buildUserTurn([...existing, ...this.#pending]);
    this.#pending = [];
    if (content.length === 0) return;
    if (merging) this.#messages[this.#messages.length - 1] = { role: 'user', content };
    else this.#messages.push({ role: 'user', content });
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
