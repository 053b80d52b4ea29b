import type { MemoryChange, MemoryStore } from '@baton/core';
import { readFeatures } from '../features.js';
import { PROGRESS_STORE_PATH } from '../progress-log.js';
import type { SessionKind, SessionResult } from '../types.js';

/** What Baton knows about a session whose agent left no progress entry. */
export interface ProgressGap {
  sessionNumber: number;
  sessionId: string;
  kind: SessionKind;
  result: SessionResult;
  toolCalls: ReadonlyMap<string, { calls: number; failed: number }>;
}

/** The heading marks the entry as Baton's, so a reader never mistakes it for the agent's account. */
function gapEntryHeading(sessionNumber: number): string {
  return `## Session ${sessionNumber} (written by Baton: the agent left no progress entry)`;
}

function toolSummary(toolCalls: ProgressGap['toolCalls']): string {
  if (toolCalls.size === 0) return 'none';
  return [...toolCalls]
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(
      ([tool, count]) =>
        `${tool} ${count.calls}${count.failed > 0 ? ` (${count.failed} failed)` : ''}`,
    )
    .join(', ');
}

/** The entry Baton appends: outcome, turns, tools used, features flipped, what comes next. */
async function gapEntry(store: MemoryStore, gap: ProgressGap): Promise<string> {
  const { result } = gap;
  const features = await readFeatures(store);
  const next = features?.find((feature) => !feature.passes);
  const flipped = result.flippedFeatures;
  return [
    gapEntryHeading(gap.sessionNumber),
    `- Session ${gap.sessionId} (${gap.kind}) ended ${result.outcome} (${result.stopReason ?? 'no stop reason'}) after ${result.turns} turn${result.turns === 1 ? '' : 's'}: ${result.reason.replace(/\s+/g, ' ').slice(0, 300)}`,
    `- Tools used: ${toolSummary(gap.toolCalls)}.`,
    `- Features flipped: ${flipped.length > 0 ? flipped.join(', ') : 'none'}; ${result.featuresAfter.passing} of ${result.featuresAfter.total} pass.`,
    `- Next: ${next ? `${next.id} (${next.description.replace(/\s+/g, ' ').slice(0, 200)})` : features === null ? 'the checklist is missing or invalid' : 'nothing: every feature passes'}.`,
  ].join('\n');
}

/** The line Baton adds to the progress log when a session's context window filled. */
function contextFullLine(turn: number, sessionNumber: number): string {
  return `- Baton: the context window of session ${sessionNumber} filled at turn ${turn}; the work is checkpointed and the next session continues from here.`;
}

/** Appends `contextFullLine` to the progress log (after the agent's own entry). */
export async function appendContextFullLine(
  store: MemoryStore,
  options: { turn: number; sessionNumber: number; sessionId: string },
): Promise<MemoryChange> {
  const line = contextFullLine(options.turn, options.sessionNumber);
  const { after } = await store.edit(
    PROGRESS_STORE_PATH,
    (current) => `${current.replace(/\s*$/, '')}\n${line}\n`,
    { command: 'insert', session: options.sessionId },
  );
  return {
    command: 'insert',
    path: '/memories/progress.md',
    bytes: Buffer.byteLength(after),
    at: Date.now(),
    session: options.sessionId,
  };
}

/**
 * Appends Baton's entry to progress.md (creating the log if the agent never did). Returns the
 * change, in the memory tool's report shape.
 */
export async function fillProgressGap(store: MemoryStore, gap: ProgressGap): Promise<MemoryChange> {
  return appendProgressEntry(store, await gapEntry(store, gap), gap.sessionId);
}

/**
 * Appends an entry Baton wrote to progress.md (creating the log if there is none): the gap entry,
 * the regression entry. Returns the change, in the memory tool's report shape.
 */
export async function appendProgressEntry(
  store: MemoryStore,
  entry: string,
  sessionId: string,
): Promise<MemoryChange> {
  const context = { command: 'insert', session: sessionId };
  let content: string;
  const existing = await store.read(PROGRESS_STORE_PATH);
  if (existing === null) {
    content = `# Progress log\n\n${entry}\n`;
    await store.write(PROGRESS_STORE_PATH, content, { ...context, mode: 'create' });
  } else {
    const { after } = await store.edit(
      PROGRESS_STORE_PATH,
      (current) => `${current.replace(/\s*$/, '')}\n\n${entry}\n`,
      context,
    );
    content = after;
  }
  return {
    command: existing === null ? 'create' : 'insert',
    path: '/memories/progress.md',
    bytes: Buffer.byteLength(content),
    at: Date.now(),
    session: sessionId,
  };
}
