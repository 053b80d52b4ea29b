/**
 * `insert`: insert `insert_text` after line `insert_line` (0 = at the top, `n_lines` = at the end).
 *
 * Lines are logical lines (see `internal/text.ts`): a file `'a\nb\n'` has 2 lines, so
 * `insert_line` 2 appends and the result is `'a\nb\nX\n'`: the final newline stays and no
 * stray blank line appears. One trailing newline of `insert_text` is its line terminator, not an
 * extra empty line. A CRLF file stays CRLF, whatever line endings `insert_text` uses.
 *
 * Success: `The file {path} has been edited.` The read-modify-write is one `store.edit`, so
 * concurrent inserts into one file all land (50 parallel inserts keep 50 lines).
 */
import type { CommandContext } from '../internal/command-context.js';
import { toMemoryToolError } from '../internal/store-error-messages.js';
import { byteLength, parseText, serializeText } from '../internal/text.js';
import { MemoryToolError } from '../memory-tool-error.js';

/** Input of `insert`, as validated by the tool. */
export interface InsertInput {
  command: 'insert';
  path: string;
  insert_line: number;
  insert_text: string;
}

/** Runs `insert`. */
export async function insert(input: InsertInput, context: CommandContext): Promise<string> {
  const { storePath, virtualPath } = context.resolvePath(input.path);
  let bytes = 0;
  try {
    const usage = await context.usageForQuota();
    await context.store.edit(
      storePath,
      (current) => {
        const inserted = insertLines(current, input.insert_line, input.insert_text);
        const after = context.prepareWrite({
          command: 'insert',
          path: virtualPath,
          before: current,
          after: inserted,
        });
        bytes = byteLength(after);
        context.assertQuota(usage, virtualPath, bytes - byteLength(current), 0);
        return after;
      },
      context.mutation('insert'),
    );
  } catch (error) {
    throw toMemoryToolError(error, { command: 'insert', path: virtualPath });
  }
  await context.changed({ command: 'insert', path: virtualPath, bytes });
  return `The file ${virtualPath} has been edited.`;
}

/** Inserts `text` after line `line` of `content`, or throws the protocol error. Pure. */
function insertLines(content: string, line: number, text: string): string {
  const document = parseText(content);
  const lineCount = document.lines.length;
  if (!Number.isInteger(line) || line < 0 || line > lineCount) {
    throw new MemoryToolError(
      `Error: Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, ${lineCount}]`,
      { code: 'invalid_input' },
    );
  }
  const normalized = text.replace(/\r\n/g, '\n');
  const textEndsWithNewline = normalized.endsWith('\n');
  const body = textEndsWithNewline ? normalized.slice(0, -1) : normalized;
  const newLines = body.split('\n');
  document.lines.splice(line, 0, ...newLines);
  // An empty file has no final newline to keep: it takes the inserted text's. Otherwise the
  // file keeps its own: appending to `'a'` gives `'a\nX'`, to `'a\n'` gives `'a\nX\n'`.
  if (lineCount === 0) document.finalNewline = textEndsWithNewline;
  return serializeText(document);
}
