import type {
  BetaContentBlock,
  BetaContentBlockParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { redactValue } from '@baton/core';
import {
  TRANSCRIPT_BLOCK_MAX_CHARACTERS,
  capText,
  type TranscriptBlock,
  type TranscriptCap,
  type TranscriptEnd,
  type TranscriptHeader,
  type TranscriptMessage,
  type TranscriptSink,
  type TranscriptTextSource,
} from '../transcript.js';

/** How a queued text block is labelled in the transcript. */
export interface TextLabel {
  source: TranscriptTextSource;
  guidanceIds?: readonly string[];
}

type Phase = TranscriptMessage['phase'];

/**
 * Turns what the session runner does into transcript messages and hands them to the sink as
 * each step completes. User blocks are collected as the conversation queues them and written as
 * one message before the request that carries them and after the tool calls that produced them.
 * Without a sink every call is a no-op.
 */
export class TranscriptRecorder {
  readonly #sink: TranscriptSink | undefined;
  readonly #sessionId: string;
  #pending: TranscriptBlock[] = [];
  #started = false;

  constructor(sink: TranscriptSink | undefined, sessionId: string) {
    this.#sink = sink;
    this.#sessionId = sessionId;
  }

  async start(header: TranscriptHeader): Promise<void> {
    if (this.#sink === undefined) return;
    this.#started = await attempt(() => this.#sink?.start(redactValue(header)));
  }

  /** The conversation queued user blocks (`label` applies to text blocks). */
  queued(blocks: readonly BetaContentBlockParam[], label?: TextLabel): void {
    if (this.#sink === undefined) return;
    // Redacted before the cap, so a secret across the cut cannot escape as two halves.
    for (const block of blocks) this.#pending.push(userBlock(redactValue(block), label));
  }

  /** Writes the queued user blocks as one message of request `turn`. */
  async flush(turn: number, phase: Phase, options: { unsent?: boolean } = {}): Promise<void> {
    if (this.#pending.length === 0) return;
    const content = this.#pending;
    this.#pending = [];
    await this.#write({
      role: 'user',
      turn,
      phase,
      at: Date.now(),
      content,
      ...(options.unsent === true ? { unsent: true as const } : {}),
    });
  }

  /** A response arrived: the assistant message with the turn's usage and applied edits. */
  async response(
    content: readonly BetaContentBlock[],
    details: Omit<TranscriptMessage, 'role' | 'content' | 'at'>,
  ): Promise<void> {
    if (this.#sink === undefined) return;
    await this.#write({
      role: 'assistant',
      at: Date.now(),
      ...details,
      content: content.map((block) => assistantBlock(redactValue(block))),
    });
  }

  /** The session ended: blocks never sent are kept (marked), then the end record. */
  async end(turn: number, phase: Phase, end: TranscriptEnd): Promise<void> {
    if (!this.#started) return;
    await this.flush(turn, phase, { unsent: true });
    await attempt(() => this.#sink?.end(this.#sessionId, redactValue(end)));
  }

  async #write(message: TranscriptMessage): Promise<void> {
    if (!this.#started) return;
    await attempt(() => this.#sink?.append(this.#sessionId, [redactValue(message)]));
  }
}

/** Runs a sink call; a sink that fails costs the session nothing. */
async function attempt(call: () => Promise<void> | undefined): Promise<boolean> {
  try {
    await call();
    return true;
  } catch {
    return false;
  }
}

function userBlock(block: BetaContentBlockParam, label: TextLabel | undefined): TranscriptBlock {
  switch (block.type) {
    case 'text':
      return {
        type: 'text',
        text: block.text,
        source: label?.source ?? 'note',
        ...(label?.guidanceIds !== undefined && label.guidanceIds.length > 0
          ? { guidanceIds: [...label.guidanceIds] }
          : {}),
      };
    case 'tool_result': {
      const { text, capped } = capText(toolResultText(block.content));
      return {
        type: 'tool_result',
        toolUseId: block.tool_use_id,
        isError: block.is_error === true,
        content: text,
        capped,
      };
    }
    default:
      return { type: 'other', blockType: block.type };
  }
}

function assistantBlock(block: BetaContentBlock): TranscriptBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text, source: 'model' };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking };
    case 'tool_use': {
      const { value, capped } = capStrings(block.input);
      return {
        type: 'tool_use',
        id: block.id,
        name: block.name,
        input: value,
        capped,
      };
    }
    default:
      return { type: 'other', blockType: block.type };
  }
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: unknown; text?: unknown }) =>
      part.type === 'text' && typeof part.text === 'string' ? part.text : `[${String(part.type)}]`,
    )
    .join('\n');
}

/** Every string in a tool input cut to the cap; `capped` describes the longest one cut. */
function capStrings(input: unknown): { value: unknown; capped?: TranscriptCap } {
  let capped: TranscriptCap | undefined;
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') {
      const result = capText(value, TRANSCRIPT_BLOCK_MAX_CHARACTERS);
      if (result.capped !== undefined && result.capped.characters > (capped?.characters ?? 0)) {
        capped = result.capped;
      }
      return result.text;
    }
    if (depth > 20 || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, walk(item, depth + 1)]),
    );
  };
  const value = walk(input, 0);
  return capped === undefined ? { value } : { value, capped };
}
