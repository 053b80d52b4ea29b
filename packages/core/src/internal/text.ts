/**
 * Line handling shared by the text commands (view, str_replace, insert).
 *
 * A file is a list of logical lines: a final newline terminates the last line instead of starting
 * an empty one, so `'a\nb\n'` has two lines, `view` numbers two lines and `insert` accepts
 * `insert_line` 0..2. A file whose every newline is CRLF is handled as LF text and written back
 * with CRLF, so an edit never mixes line endings.
 */

/** A text file split into logical lines. */
export interface TextDocument {
  /** Logical lines without their terminators. `''` has none; `'\n'` has one empty line. */
  lines: string[];
  /** The file's line terminator. */
  eol: '\n' | '\r\n';
  /** True if the file ends with `eol`. */
  finalNewline: boolean;
}

/** True if the text has at least one CRLF and no bare LF. */
export function isCrlfText(content: string): boolean {
  // Counted with indexOf rather than split: no array of pieces per call.
  let crlf = 0;
  for (let index = content.indexOf('\n'); index !== -1; index = content.indexOf('\n', index + 1)) {
    if (index === 0 || content.charCodeAt(index - 1) !== 0x0d) return false;
    crlf += 1;
  }
  return crlf > 0;
}

/** Splits a file into logical lines. */
export function parseText(content: string): TextDocument {
  // Most files have no CR at all: then they are LF text without scanning for CRLF.
  const eol = content.indexOf('\r') !== -1 && isCrlfText(content) ? '\r\n' : '\n';
  const finalNewline = content.endsWith(eol);
  const body = finalNewline ? content.slice(0, content.length - eol.length) : content;
  const lines = content === '' ? [] : body.split(eol);
  return { lines, eol, finalNewline };
}

/** Joins logical lines back into file content. */
export function serializeText(document: TextDocument): string {
  if (document.lines.length === 0) return '';
  return document.lines.join(document.eol) + (document.finalNewline ? document.eol : '');
}

/** Width of the right-aligned line number column (`999999` has six digits). */
const LINE_NUMBER_WIDTH = 6;

/** The largest file `view` will show. */
export const MAX_VIEW_LINES = 999_999;

/** `PADDING[n]`: the spaces before a line number of `n` digits. */
const PADDING = Array.from({ length: LINE_NUMBER_WIDTH + 1 }, (_, digits) =>
  ' '.repeat(LINE_NUMBER_WIDTH - digits),
);

/** One numbered line: the number right-aligned in six characters, a TAB, the line. */
function numberLine(lineNumber: number, line: string): string {
  const digits = String(lineNumber);
  return `${PADDING[digits.length] ?? ''}${digits}\t${line}`;
}

/** `toLocaleString('en-US')` builds a formatter per call (microseconds); one is kept instead. */
const EN_US = new Intl.NumberFormat('en-US');

/**
 * More than the hint line plus its newline can take: the hint texts are under 200 characters
 * around at most 7-digit line numbers and a limit printed with thousands separators.
 */
const MAX_HINT_RESERVE = 512;

/** `'\n' + numberLine(n, '')` for the first line numbers, built once (views mostly show these). */
const PREFIXES: string[] = [];
const CACHED_PREFIXES = 10_000;

/** The cached prefixes, grown to hold `lastNumber` (below `CACHED_PREFIXES`). */
function cachedPrefixes(lastNumber: number): readonly string[] {
  for (let next = PREFIXES.length; next <= lastNumber; next++) {
    PREFIXES.push(`\n${numberLine(next, '')}`);
  }
  return PREFIXES;
}

/**
 * Renders `header` then numbered `lines` (the first numbered `firstNumber`), keeping the whole
 * text within `maxChars`. When it has to cut, it stops at a line boundary and ends with one line
 * telling the model which `view_range` to ask for next; if even the first line does not fit, that
 * line is shown cut. `totalLines` is the file's line count, for the hint.
 */
export function renderNumberedLines(options: {
  header: string;
  lines: readonly string[];
  firstNumber: number;
  totalLines: number;
  maxChars: number;
}): string {
  const { header, lines, firstNumber, totalLines, maxChars } = options;
  // The common case, everything fits with room for any hint to spare: no per-line budget checks
  // and no hint text. Every number has at most LINE_NUMBER_WIDTH digits (longer files are
  // refused), so each numbered line is the line plus LINE_NUMBER_WIDTH + 1 characters.
  let total = header.length;
  for (const line of lines) total += 1 + LINE_NUMBER_WIDTH + 1 + line.length;
  if (total <= maxChars - MAX_HINT_RESERVE && firstNumber + lines.length - 1 <= MAX_VIEW_LINES) {
    // One join of the pieces: the result is one flat string, without a string per line.
    const lastNumber = firstNumber + lines.length - 1;
    const prefixes = lastNumber < CACHED_PREFIXES ? cachedPrefixes(lastNumber) : undefined;
    const pieces = new Array<string>(1 + 2 * lines.length);
    pieces[0] = header;
    for (let index = 0; index < lines.length; index++) {
      const lineNumber = firstNumber + index;
      pieces[1 + 2 * index] = prefixes?.[lineNumber] ?? `\n${numberLine(lineNumber, '')}`;
      pieces[2 + 2 * index] = lines[index] ?? '';
    }
    return pieces.join('');
  }
  // Room for the hint line, computed with the widest numbers it can contain.
  const reserve =
    1 +
    Math.max(
      pagingHint(maxChars, totalLines, totalLines, totalLines).length,
      longLineHint(maxChars, totalLines, totalLines + 1).length,
    );
  const parts: string[] = [header];
  let length = header.length;
  for (let index = 0; index < lines.length; index++) {
    const rendered = numberLine(firstNumber + index, lines[index] ?? '');
    const budget = index === lines.length - 1 ? maxChars : maxChars - reserve;
    if (length + 1 + rendered.length <= budget) {
      parts.push(rendered);
      length += 1 + rendered.length;
      continue;
    }
    const lineNumber = firstNumber + index;
    if (index === 0) {
      // Not even the first line fits: show its start, so a view never comes back empty.
      parts.push(rendered.slice(0, Math.max(0, maxChars - reserve - length - 1)));
      parts.push(longLineHint(maxChars, lineNumber, totalLines));
    } else {
      parts.push(pagingHint(maxChars, firstNumber, lineNumber, totalLines));
    }
    return parts.join('\n');
  }
  return parts.join('\n');
}

/** Final line of a view cut at a line boundary; `next` is the first line not shown. */
function pagingHint(maxChars: number, first: number, next: number, totalLines: number): string {
  const shown = Math.max(1, next - first);
  const end = Math.min(totalLines, next + shown - 1);
  return `[Output cut at ${EN_US.format(maxChars)} characters: showing lines ${first}-${next - 1} of ${totalLines}. To read on, view this file again with view_range [${next}, ${end}].]`;
}

/** Final line of a view whose first line alone is longer than the limit. */
function longLineHint(maxChars: number, lineNumber: number, totalLines: number): string {
  const after =
    lineNumber < totalLines
      ? ` To read the lines after it, view this file again with view_range [${lineNumber + 1}, -1].`
      : '';
  return `[Output cut at ${EN_US.format(maxChars)} characters: line ${lineNumber} is longer than that and is shown only in part.${after}]`;
}

/**
 * Human-readable size in the style of `du -h`: bytes below 1 KiB as `512B`, otherwise one
 * decimal below 10 (`4.0K`, `1.5K`, `1.2M`) and whole numbers from 10 up (`12K`, `340K`),
 * always rounded up so a non-empty file never shows as smaller than it is.
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  const units = ['K', 'M', 'G', 'T'] as const;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  let text: string;
  if (value < 10) {
    const rounded = Math.ceil(value * 10) / 10;
    text = rounded < 10 ? rounded.toFixed(1) : '10';
  } else {
    text = String(Math.ceil(value));
  }
  if (text === '1024' && unit < units.length - 1) return `1.0${units[unit + 1]}`;
  return `${text}${units[unit]}`;
}

/** UTF-8 size of a string in bytes. */
export function byteLength(content: string): number {
  return Buffer.byteLength(content, 'utf8');
}
