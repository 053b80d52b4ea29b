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
  const crlf = content.split('\r\n').length - 1;
  if (crlf === 0) return false;
  return content.split('\n').length - 1 === crlf;
}

/** Splits a file into logical lines. */
export function parseText(content: string): TextDocument {
  const eol = isCrlfText(content) ? '\r\n' : '\n';
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
export const LINE_NUMBER_WIDTH = 6;

/** The largest file `view` will show. */
export const MAX_VIEW_LINES = 999_999;

/** One numbered line: the number right-aligned in six characters, a TAB, the line. */
export function numberLine(lineNumber: number, line: string): string {
  return `${String(lineNumber).padStart(LINE_NUMBER_WIDTH, ' ')}\t${line}`;
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
  const parts: string[] = [header];
  let length = header.length;
  // Room for the hint line, computed with the widest numbers it can contain.
  const reserve =
    1 +
    Math.max(
      pagingHint(maxChars, totalLines, totalLines, totalLines).length,
      longLineHint(maxChars, totalLines, totalLines + 1).length,
    );
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
  return `[Output cut at ${maxChars.toLocaleString('en-US')} characters: showing lines ${first}-${next - 1} of ${totalLines}. To read on, view this file again with view_range [${next}, ${end}].]`;
}

/** Final line of a view whose first line alone is longer than the limit. */
function longLineHint(maxChars: number, lineNumber: number, totalLines: number): string {
  const after =
    lineNumber < totalLines
      ? ` To read the lines after it, view this file again with view_range [${lineNumber + 1}, -1].`
      : '';
  return `[Output cut at ${maxChars.toLocaleString('en-US')} characters: line ${lineNumber} is longer than that and is shown only in part.${after}]`;
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
