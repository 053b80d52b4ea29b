/**
 * `str_replace`: replace the one occurrence of `old_str` with `new_str` (omitted = delete it).
 *
 * The match runs on the whole text, not line by line, so a multi-line `old_str` works. Every
 * occurrence counts, overlapping ones and several on one line included; if there is not exactly
 * one, nothing changes and the error lists the line where each occurrence starts. `new_str` is
 * inserted literally (`$&`, `$1` mean nothing special). In a CRLF file, `old_str` and `new_str`
 * are matched and written with the file's CRLF line endings.
 *
 * Success: `The memory file has been edited. Here is the snippet showing the change (with line
 * numbers):` then the edited region with two lines of context on each side.
 *
 * The read-modify-write is one `store.edit`, so a concurrent edit of the same file is never lost.
 */
import type { CommandContext } from '../internal/command-context.js';
import { toMemoryToolError } from '../internal/store-error-messages.js';
import { byteLength, isCrlfText, parseText, renderNumberedLines } from '../internal/text.js';
import { MemoryToolError } from '../memory-tool-error.js';

/** Input of `str_replace`, as validated by the tool. */
export interface StrReplaceInput {
  command: 'str_replace';
  path: string;
  old_str: string;
  new_str?: string | undefined;
}

/** Lines of context shown above and below the edited region. */
const SNIPPET_CONTEXT_LINES = 2;

/** Runs `str_replace`. */
export async function strReplace(input: StrReplaceInput, context: CommandContext): Promise<string> {
  const { storePath, virtualPath } = context.resolvePath(input.path);
  if (input.old_str === '') {
    throw new MemoryToolError(
      `Error: No replacement was performed, old_str is empty. Give the exact text to replace; use insert to add text.`,
      { code: 'invalid_input' },
    );
  }
  let snippet = { startLine: 1, endLine: 1, text: '' };
  let bytes = 0;
  try {
    const usage = await context.usageForQuota();
    await context.store.edit(
      storePath,
      (current) => {
        const replaced = replaceUnique(current, input.old_str, input.new_str ?? '', virtualPath);
        const after = context.prepareWrite({
          command: 'str_replace',
          path: virtualPath,
          before: current,
          after: replaced.text,
        });
        bytes = byteLength(after);
        context.assertQuota(usage, virtualPath, bytes - byteLength(current), 0);
        snippet = { ...replaced, text: after };
        return after;
      },
      context.mutation('str_replace'),
    );
  } catch (error) {
    throw toMemoryToolError(error, { command: 'str_replace', path: virtualPath });
  }
  await context.changed({ command: 'str_replace', path: virtualPath, bytes });

  const { lines } = parseText(snippet.text);
  const first = Math.max(1, snippet.startLine - SNIPPET_CONTEXT_LINES);
  const last = Math.min(lines.length, snippet.endLine + SNIPPET_CONTEXT_LINES);
  return renderNumberedLines({
    header:
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):',
    lines: lines.slice(first - 1, last),
    firstNumber: first,
    totalLines: lines.length,
    maxChars: context.limits.maxViewChars,
  });
}

/** The replaced text and the lines (1-based, in the new text) the replacement covers. */
interface Replacement {
  text: string;
  startLine: number;
  endLine: number;
}

/** Replaces the single occurrence of `oldStr`, or throws the protocol error. Pure. */
function replaceUnique(content: string, oldStr: string, newStr: string, path: string): Replacement {
  const crlf = isCrlfText(content);
  // In a CRLF file, match and write with the file's own line endings: the model writes `\n`.
  const search = crlf ? toCrlf(oldStr) : oldStr;
  const replacement = crlf ? toCrlf(newStr) : newStr;

  const starts: number[] = [];
  for (
    let index = content.indexOf(search);
    index !== -1;
    index = content.indexOf(search, index + 1)
  ) {
    starts.push(index);
  }
  if (starts.length === 0) {
    throw new MemoryToolError(
      `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`,
      { code: 'not_found' },
    );
  }
  if (starts.length > 1) {
    const lines = starts.map((start) => lineNumberAt(content, start));
    throw new MemoryToolError(
      `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(', ')}. Please ensure it is unique`,
      { code: 'refused' },
    );
  }
  const start = starts[0]!;
  // Slicing, not String.prototype.replace: `$&`, `$1`, `$$` in new_str stay literal.
  const text = content.slice(0, start) + replacement + content.slice(start + search.length);
  const startLine = lineNumberAt(content, start);
  const endLine = startLine + countNewlines(replacement);
  return { text, startLine, endLine };
}

/** 1-based line number of the character at `offset`. */
function lineNumberAt(content: string, offset: number): number {
  return countNewlines(content.slice(0, offset)) + 1;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    count += 1;
  }
  return count;
}

/** Converts bare LF line endings to CRLF, leaving existing CRLF alone. */
function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}
