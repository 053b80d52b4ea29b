/**
 * Finding text in what a project left behind: its session transcripts and its memory. One
 * function for `baton search` (Redis or local) and the dashboard's search API, so both find the
 * same things and show the same snippets.
 */
import { toVirtualPath, type MemoryStore } from '@baton/core';
import type { Transcript, TranscriptBlock, TranscriptSummary } from './transcript.js';

/** The part of a transcript store search reads. */
export interface TranscriptReader {
  list(): Promise<TranscriptSummary[]>;
  read(sessionId: string): Promise<Transcript | null>;
}

/** One place the text was found. */
export type SearchHit =
  | {
      source: 'transcript';
      sessionId: string;
      sessionNumber: number;
      turn: number;
      role: 'user' | 'assistant';
      /** The block kind: `text` (with its `textSource`), `tool_use`, `tool_result`, `thinking`. */
      block: TranscriptBlock['type'];
      textSource?: string;
      snippet: string;
    }
  | { source: 'memory'; path: string; line: number; snippet: string };

export interface SearchOptions {
  /** Most hits returned. Default 50. */
  limit?: number | undefined;
  /** Characters of context on each side of the match in a snippet. Default 60. */
  context?: number | undefined;
}

export interface SearchResult {
  hits: SearchHit[];
  /** More hits exist than `limit` allowed. */
  truncated: boolean;
}

/** The longest search text accepted (characters). */
export const SEARCH_MAX_CHARACTERS = 200;

/** What is wrong with a search text (empty, too long), or `null` when it is fine. */
export function searchTextProblem(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed === '') return 'must not be empty';
  if (trimmed.length > SEARCH_MAX_CHARACTERS) return `at most ${SEARCH_MAX_CHARACTERS} characters`;
  return null;
}

/**
 * Case-insensitive plain-text search: memory files first (path order), then transcripts,
 * newest session first and in message order within one. Stops reading at `limit` hits.
 */
export async function searchProject(
  sources: { transcripts: TranscriptReader; memory: MemoryStore },
  text: string,
  options: SearchOptions = {},
): Promise<SearchResult> {
  const limit = options.limit ?? 50;
  const context = options.context ?? 60;
  const needle = text.toLowerCase();
  const hits: SearchHit[] = [];
  const full = () => hits.length > limit;

  const entries = await sources.memory.list('', { depth: 64 });
  for (const entry of entries) {
    if (full()) break;
    if (entry.kind !== 'file') continue;
    const content = await sources.memory.read(entry.path).catch(() => null);
    if (content === null) continue;
    const lines = content.split('\n');
    for (let index = 0; index < lines.length && !full(); index += 1) {
      const line = lines[index] ?? '';
      const at = line.toLowerCase().indexOf(needle);
      if (at < 0) continue;
      hits.push({
        source: 'memory',
        path: toVirtualPath(entry.path),
        line: index + 1,
        snippet: snippet(line, at, needle.length, context),
      });
    }
  }

  const summaries = (await sources.transcripts.list()).reverse();
  for (const summary of summaries) {
    if (full()) break;
    const transcript = await sources.transcripts.read(summary.sessionId);
    if (transcript === null) continue;
    for (const message of transcript.messages) {
      for (const block of message.content) {
        if (full()) break;
        const searched = blockText(block);
        const at = searched.toLowerCase().indexOf(needle);
        if (at < 0) continue;
        hits.push({
          source: 'transcript',
          sessionId: transcript.sessionId,
          sessionNumber: transcript.sessionNumber,
          turn: message.turn,
          role: message.role,
          block: block.type,
          ...(block.type === 'text' ? { textSource: block.source } : {}),
          snippet: snippet(searched, at, needle.length, context),
        });
      }
    }
  }
  return { hits: hits.slice(0, limit), truncated: hits.length > limit };
}

function blockText(block: TranscriptBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'tool_use':
      return `${block.name} ${JSON.stringify(block.input)}`;
    case 'tool_result':
      return block.content;
    case 'thinking':
      return block.thinking;
    default:
      return '';
  }
}

/** The match with `context` characters on each side, on one line, `…` where it was cut. */
function snippet(text: string, at: number, length: number, context: number): string {
  const start = Math.max(0, at - context);
  const end = Math.min(text.length, at + length + context);
  const body = text.slice(start, end).replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`;
}
