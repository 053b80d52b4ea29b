/**
 * Line diff between two versions of a memory file, for the memory browser, on jsdiff.
 *
 * The model writes memory files, so their size and shape are attacker-controlled: every bound
 * here keeps one request from holding the event loop or growing the heap. Lines are counted
 * before anything is split (a cheap scan), jsdiff stops at `maxEdits` changed lines or after
 * `timeoutMs`, and whatever exceeds a bound is answered as "too large to show" with no lines.
 */
import { diffArrays } from 'diff';

type DiffOperation = 'equal' | 'insert' | 'delete';

export interface DiffLine {
  /** What happened to the line going from `before` to `after`. */
  op: DiffOperation;
  /** The line's text without its newline. */
  text: string;
  /** 1-based line number in `before` (equal and delete lines). */
  oldLine?: number;
  /** 1-based line number in `after` (equal and insert lines). */
  newLine?: number;
}

/** Which bound a diff exceeded. */
type DiffTooLargeReason = 'lines' | 'edits' | 'time';

export type LineDiff =
  | { tooLarge: false; lines: DiffLine[]; added: number; removed: number }
  | {
      tooLarge: true;
      reason: DiffTooLargeReason;
      /** One plain sentence for the page. */
      message: string;
      lines: [];
    };

export interface DiffLimits {
  /** Largest line count of either version. Default 20 000. */
  maxLines?: number;
  /** Most changed lines (inserts plus deletes) a shown diff may have. Default 500. */
  maxEdits?: number;
  /** Longest the diff may run on the event loop, in milliseconds. Default 30. */
  timeoutMs?: number;
}

const DEFAULT_DIFF_LIMITS: Required<DiffLimits> = {
  maxLines: 20_000,
  maxEdits: 500,
  timeoutMs: 30,
};

/** Lines in `text` (a final newline does not start another), counting without allocating. */
function countLines(text: string, stopAbove: number): number {
  if (text === '') return 0;
  let count = 0;
  let index = -1;
  while ((index = text.indexOf('\n', index + 1)) !== -1) {
    count++;
    if (count > stopAbove) return count;
  }
  return text.endsWith('\n') ? count : count + 1;
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function tooLarge(reason: DiffTooLargeReason, limits: Required<DiffLimits>): LineDiff {
  const messages: Record<DiffTooLargeReason, string> = {
    lines: `Too large to show: a version has more than ${limits.maxLines.toLocaleString('en-US')} lines.`,
    edits: `Too large to show: the versions differ in more than ${limits.maxEdits.toLocaleString('en-US')} lines.`,
    time: `Too large to show: the diff did not finish within ${limits.timeoutMs} ms.`,
  };
  const message = messages[reason];
  return { tooLarge: true, reason, message, lines: [] };
}

/** Diff two texts line by line, within `limits`. */
export function diffLines(
  beforeText: string,
  afterText: string,
  limits: DiffLimits = {},
): LineDiff {
  const bounds = { ...DEFAULT_DIFF_LIMITS, ...limits };
  if (
    countLines(beforeText, bounds.maxLines) > bounds.maxLines ||
    countLines(afterText, bounds.maxLines) > bounds.maxLines
  ) {
    return tooLarge('lines', bounds);
  }
  const before = splitLines(beforeText);
  const after = splitLines(afterText);
  const started = Date.now();
  const changes = diffArrays(before, after, {
    maxEditLength: bounds.maxEdits,
    timeout: bounds.timeoutMs,
  });
  if (changes === undefined) {
    // jsdiff answers undefined for both bounds; the clock tells which one stopped it.
    return tooLarge(Date.now() - started >= bounds.timeoutMs ? 'time' : 'edits', bounds);
  }
  const lines: DiffLine[] = [];
  let oldLine = 0;
  let newLine = 0;
  let added = 0;
  let removed = 0;
  for (const change of changes) {
    for (const text of change.value) {
      if (change.added) {
        lines.push({ op: 'insert', text, newLine: ++newLine });
        added++;
      } else if (change.removed) {
        lines.push({ op: 'delete', text, oldLine: ++oldLine });
        removed++;
      } else {
        lines.push({ op: 'equal', text, oldLine: ++oldLine, newLine: ++newLine });
      }
    }
  }
  return { tooLarge: false, lines, added, removed };
}
