/**
 * Transcripts: what a session said and did, kept after it ends. The session runner writes one
 * through a `TranscriptSink` (the worker's lives in Redis, `baton run`'s in files under
 * BATON_HOME); readers get the same `Transcript` shape from either `TranscriptStore`.
 *
 * A transcript is a record, not a replay: messages are appended as they complete (the blocks
 * queued for a request, the response, the results of its tool calls), so a worker killed mid-
 * session leaves everything up to its last completed step. Every string is redacted with
 * `@baton/core`'s secret rules and tool results and tool inputs are capped per block.
 */
import type {
  AppliedEdit,
  SessionFallback,
  SessionKind,
  SessionOutcome,
  TurnUsage,
} from './types.js';

/**
 * Most characters one tool result, or one string field of a tool call's input, keeps in a
 * transcript. Beyond it the head and the tail are kept around a marker saying how much was cut.
 */
export const TRANSCRIPT_BLOCK_MAX_CHARACTERS = 8_000;

/** Transcripts kept per project: starting the next one removes the oldest beyond this. */
export const TRANSCRIPT_SESSIONS_KEPT = 100;

/**
 * The rule for session ids a transcript store accepts (Baton makes UUIDs): nothing that could
 * shape a Redis key or a file path.
 */
export function isTranscriptSessionId(value: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(value);
}

/** Where a text block came from. */
export type TranscriptTextSource =
  /** The session's first prompt, or the end-of-session prompt. */
  | 'prompt'
  /** Operator guidance (`baton say`), as `<operator_guidance>` blocks. */
  | 'guidance'
  /** A note Baton added (a checkpoint that failed, a response cut by max_tokens). */
  | 'note'
  /** Text the model wrote. */
  | 'model';

/** A block that was cut to the cap: how long it was and how much of it is kept. */
export interface TranscriptCap {
  characters: number;
  kept: number;
}

/** One content block of a transcript message. */
export type TranscriptBlock =
  | {
      type: 'text';
      text: string;
      source: TranscriptTextSource;
      /** The guidance ids a `guidance` (or `prompt`) block carries. */
      guidanceIds?: string[];
    }
  | {
      type: 'tool_use';
      id: string;
      name: string;
      input: unknown;
      /** Set when a string field of the input was cut. */
      capped?: TranscriptCap | undefined;
    }
  | {
      type: 'tool_result';
      toolUseId: string;
      isError: boolean;
      content: string;
      capped?: TranscriptCap | undefined;
    }
  | { type: 'thinking'; thinking: string }
  /** A block kept only by its type (redacted thinking, server tool blocks, ...). */
  | { type: 'other'; blockType: string };

/** One message of a transcript. */
export interface TranscriptMessage {
  role: 'user' | 'assistant';
  /**
   * The request this message went with (user) or answered (assistant), 1-based. Blocks queued
   * after the last request carry the number the next request would have had.
   */
  turn: number;
  /** `work` for the main loop, `end` for the end-of-session phase. */
  phase: 'work' | 'end';
  at: number;
  content: TranscriptBlock[];
  /** User blocks the session queued but never sent (it stopped first). */
  unsent?: true;
  /** Assistant messages: why the response stopped. */
  stopReason?: string;
  /** Assistant messages: the model the request went to (the fallback model after a fallback). */
  model?: string;
  /** Assistant messages: the turn's usage as the API reported it. */
  usage?: TurnUsage;
  /** Assistant messages: the turn's cost in USD. */
  costUsd?: number;
  /** Assistant messages: the time the request took (ms). */
  durationMs?: number;
  /** Assistant messages: the context edits the API applied to this turn's request. */
  appliedEdits?: AppliedEdit[];
  /** Assistant messages: input tokens the applied edits cleared. */
  clearedInputTokens?: number;
}

/** What a transcript says about its session before the first message. */
export interface TranscriptHeader {
  projectId: string;
  sessionId: string;
  sessionNumber: number;
  kind: SessionKind;
  model: string;
  interrupted: boolean;
  startedAt: number;
}

/** How the session ended (absent from a transcript whose session never finished). */
export interface TranscriptEnd {
  endedAt: number;
  outcome: SessionOutcome;
  reason: string;
  stopReason?: string | undefined;
  turns: number;
  costUsd: number;
  /** Set when the session moved to its fallback model (`SessionResult.fallback`). */
  fallback?: SessionFallback | undefined;
}

/** A whole transcript, as readers get it. `end` is `null` when the session never finished. */
export interface Transcript extends TranscriptHeader {
  end: TranscriptEnd | null;
  messages: TranscriptMessage[];
}

/** A transcript without its messages, for listings. */
export interface TranscriptSummary extends TranscriptHeader {
  end: TranscriptEnd | null;
  messageCount: number;
}

/**
 * Where a session writes its transcript (`RunSessionOptions.transcript`). Each call is awaited
 * before the session goes on, so what a call stored survives the process; a call that throws
 * costs the session nothing (the transcript then misses that part).
 */
export interface TranscriptSink {
  /** The session started; called once, before any `append`. */
  start(header: TranscriptHeader): Promise<void>;
  /** Messages completed since the previous call, oldest first, already redacted and capped. */
  append(sessionId: string, messages: readonly TranscriptMessage[]): Promise<void>;
  /** The session ended; called once, after the last `append`. */
  end(sessionId: string, end: TranscriptEnd): Promise<void>;
}

/** A project's transcripts: written as a sink, read back by the CLI and the dashboard. */
export interface TranscriptStore extends TranscriptSink {
  /** Every kept transcript, oldest first, without messages. */
  list(): Promise<TranscriptSummary[]>;
  /** One transcript, or `null` when none with that session id is kept. */
  read(sessionId: string): Promise<Transcript | null>;
}

/** One stored record of a transcript: its header, one message, or its end. */
export type TranscriptRecord =
  | ({ type: 'header' } & TranscriptHeader)
  | ({ type: 'message' } & TranscriptMessage)
  | ({ type: 'end' } & TranscriptEnd);

/**
 * Reassembles a transcript from its stored records (JSON texts, in order); records that do not
 * parse are skipped, and `null` means there was no header.
 */
export function transcriptFromRecords(records: readonly string[]): Transcript | null {
  let transcript: Transcript | null = null;
  for (const raw of records) {
    let record: TranscriptRecord;
    try {
      record = JSON.parse(raw) as TranscriptRecord;
    } catch {
      continue;
    }
    if (record.type === 'header') {
      const { type: _type, ...header } = record;
      transcript = { ...header, end: null, messages: [] };
    } else if (transcript !== null && record.type === 'message') {
      const { type: _type, ...message } = record;
      transcript.messages.push(message);
    } else if (transcript !== null && record.type === 'end') {
      const { type: _type, ...end } = record;
      transcript.end = end;
    }
  }
  return transcript;
}

/** A transcript's listing entry. */
export function summarizeTranscript(transcript: Transcript): TranscriptSummary {
  const { messages, ...rest } = transcript;
  return { ...rest, messageCount: messages.length };
}

/**
 * `text` cut to `max` characters: the head and the tail are kept around a marker saying how
 * many characters the cap removed, so a reader sees both the start of an output and its end
 * (where errors usually are).
 */
export function capText(
  text: string,
  max: number = TRANSCRIPT_BLOCK_MAX_CHARACTERS,
): { text: string; capped?: TranscriptCap } {
  if (text.length <= max) return { text };
  const head = Math.ceil(max * 0.75);
  const tail = max - head;
  const removed = text.length - head - tail;
  const marker = `\n[transcript cap: ${removed} of ${text.length} characters not kept (at most ${max} per block)]\n`;
  return {
    text: text.slice(0, head) + marker + (tail > 0 ? text.slice(text.length - tail) : ''),
    capped: { characters: text.length, kept: max },
  };
}
