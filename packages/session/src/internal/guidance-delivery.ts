import { type GuidanceSource, type OperatorGuidance, renderGuidance } from '../guidance.js';
import type { Conversation } from './conversation.js';
import type { EventBody } from './events.js';

/**
 * Operator guidance in one session: what is new at the source, what went to the model (each
 * entry once), and the acknowledgement once a response answered the request that carried it.
 */
export class GuidanceDelivery {
  readonly #source: GuidanceSource | undefined;
  readonly #sessionId: string;
  readonly #emit: (body: EventBody) => Promise<void>;
  /** Guidance ids sent to the model in this session, and those no response has answered yet. */
  readonly #sent = new Set<string>();
  #unanswered: string[] = [];

  constructor(
    source: GuidanceSource | undefined,
    sessionId: string,
    emit: (body: EventBody) => Promise<void>,
  ) {
    this.#source = source;
    this.#sessionId = sessionId;
    this.#emit = emit;
  }

  /** Guidance not yet sent in this session; a source that fails costs the session nothing. */
  async pending(): Promise<OperatorGuidance[]> {
    const source = this.#source;
    if (source === undefined) return [];
    try {
      return (await source.pending()).filter((entry) => !this.#sent.has(entry.id));
    } catch {
      return [];
    }
  }

  /** `entries` go with the request of `turn` (in its first message, or after it). */
  async queued(
    entries: readonly OperatorGuidance[],
    turn: number,
    inFirstMessage: boolean,
  ): Promise<void> {
    if (entries.length === 0) return;
    for (const entry of entries) this.#sent.add(entry.id);
    this.#unanswered.push(...entries.map((entry) => entry.id));
    await this.#emit({
      type: 'guidance-delivered',
      guidanceIds: entries.map((entry) => entry.id),
      turn,
      inFirstMessage,
    });
  }

  /** Guidance sent while the previous request was in flight goes with the next one (`turn`). */
  async sendNew(conversation: Conversation, turn: number): Promise<void> {
    const guidance = await this.pending();
    if (guidance.length === 0) return;
    conversation.addText(renderGuidance(guidance), {
      source: 'guidance',
      guidanceIds: guidance.map((entry) => entry.id),
    });
    await this.queued(guidance, turn, false);
  }

  /** A response arrived at `turn`: the guidance its request carried is acknowledged. */
  async answered(turn: number): Promise<void> {
    const source = this.#source;
    if (source === undefined || this.#unanswered.length === 0) return;
    const ids = this.#unanswered;
    this.#unanswered = [];
    try {
      await source.acknowledge(ids, { sessionId: this.#sessionId, turn });
    } catch {
      // Unacknowledged guidance is repeated in the next session's first message: nothing lost.
    }
  }
}
