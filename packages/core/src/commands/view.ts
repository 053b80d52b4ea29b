/**
 * `view`: list a directory (two levels deep) or show a file with line numbers.
 *
 * Directory: `Here're the files and directories up to 2 levels deep in {path}, excluding hidden
 * items and node_modules:` then `{size}\t{path}` per entry, the directory itself first, then its
 * entries in tree order (each directory followed by its children, names in code-unit order),
 * directories with a trailing `/`. `view_range` is ignored. The listing is cut at `maxViewChars`
 * with a last line saying how many entries were left out.
 *
 * File: `Here's the content of {path} with line numbers:` then each line as its number
 * right-aligned in six characters, a TAB, the line. Optional `view_range: [start, end]` (1-based,
 * inclusive, `end` -1 = to the end) is validated. Over 999,999 lines is refused; a view longer
 * than `maxViewChars` is cut at a line boundary with a final line telling how to page on.
 */
import type { CommandContext } from '../internal/command-context.js';
import { notFoundMessage, toMemoryToolError } from '../internal/store-error-messages.js';
import { MAX_VIEW_LINES, formatSize, parseText, renderNumberedLines } from '../internal/text.js';
import { MemoryToolError } from '../memory-tool-error.js';
import { MEMORY_ROOT } from '../path-policy.js';
import { isStoreError, type EntryStat, type ListedEntry } from '../store.js';

/** Input of `view`, as validated by the tool. */
export interface ViewInput {
  command: 'view';
  path: string;
  view_range?: number[] | undefined;
}

/** Runs `view`. */
export async function view(input: ViewInput, context: CommandContext): Promise<string> {
  const { storePath, virtualPath } = context.resolvePath(input.path);
  // Files are viewed far more often than directories: read first (one store call), and only
  // when the store says it is a directory, stat and list it.
  let content: string | null;
  try {
    content = await context.store.read(storePath);
  } catch (error) {
    if (!isStoreError(error, 'is_directory')) {
      throw toMemoryToolError(error, { command: 'view', path: virtualPath });
    }
    return viewDirectory(storePath, virtualPath, context);
  }
  if (content === null) {
    throw new MemoryToolError(notFoundMessage('view', virtualPath), { code: 'not_found' });
  }
  return viewFile(content, virtualPath, input.view_range, context);
}

async function viewDirectory(
  storePath: string,
  virtualPath: string,
  context: CommandContext,
): Promise<string> {
  // The stat (for the directory's own size line) and the list are independent: issue both at
  // once, so a networked store can answer them in one round trip.
  let stat: EntryStat | null;
  let entries: ListedEntry[];
  try {
    [stat, entries] = await Promise.all([
      context.store.stat(storePath),
      context.store.list(storePath, { depth: 2, skipHidden: true }),
    ]);
  } catch (error) {
    throw toMemoryToolError(error, { command: 'view', path: virtualPath });
  }
  if (stat === null) {
    // Deleted between the read and the stat.
    throw new MemoryToolError(notFoundMessage('view', virtualPath), { code: 'not_found' });
  }
  const header = `Here're the files and directories up to 2 levels deep in ${virtualPath}, excluding hidden items and node_modules:`;
  const lines = [header, `${formatSize(stat.size)}\t${virtualPath}`];
  let length = lines[0]!.length + 1 + lines[1]!.length;
  const sorted = sortTreeOrder(entries);
  const maxChars = context.limits.maxViewChars;
  // The cut hint is built once; per entry only its length is needed, which depends only on the
  // number of digits of the count it shows.
  const hintPrefix = `[Listing cut at ${maxChars.toLocaleString('en-US')} characters: `;
  const hintSuffix = ' more entries not shown. View a subdirectory to see them.]';
  const hintLength = hintPrefix.length + hintSuffix.length;
  for (let index = 0; index < sorted.length; index++) {
    const entry = sorted[index]!;
    const line = `${formatSize(entry.size)}\t${MEMORY_ROOT}/${entry.path}${entry.kind === 'directory' ? '/' : ''}`;
    const remaining = sorted.length - index;
    const budget =
      remaining === 1 ? maxChars : maxChars - (hintLength + String(remaining).length) - 1;
    if (length + 1 + line.length > budget) {
      lines.push(`${hintPrefix}${remaining}${hintSuffix}`);
      break;
    }
    lines.push(line);
    length += 1 + line.length;
  }
  return lines.join('\n');
}

/**
 * Tree order: every directory directly followed by its children, siblings by name in code-unit
 * order. Plain path order would put `a-b` between `a` and `a/x`, since `-` sorts before `/`.
 * Stores return path order, which is already tree order unless a name contains a character that
 * sorts before `/`: one linear check skips the sort in that common case.
 */
function sortTreeOrder(entries: ListedEntry[]): ListedEntry[] {
  for (let index = 1; index < entries.length; index++) {
    if (compareTreeOrder(entries[index - 1]!.path, entries[index]!.path) > 0) {
      return [...entries].sort((left, right) => compareTreeOrder(left.path, right.path));
    }
  }
  return entries;
}

const SLASH = 0x2f;

/**
 * Compares two store paths segment by segment without splitting them: the same as comparing
 * code units with `/` counted below every other character (a segment that ends first sorts
 * first), and a path before everything below it.
 */
export function compareTreeOrder(left: string, right: string): number {
  const count = Math.min(left.length, right.length);
  for (let index = 0; index < count; index++) {
    const a = left.charCodeAt(index);
    const b = right.charCodeAt(index);
    if (a === b) continue;
    if (a === SLASH) return -1;
    if (b === SLASH) return 1;
    return a - b;
  }
  return left.length - right.length;
}

function viewFile(
  content: string,
  virtualPath: string,
  viewRange: number[] | undefined,
  context: CommandContext,
): string {
  const { lines } = parseText(content);
  if (lines.length > MAX_VIEW_LINES) {
    throw new MemoryToolError(`File ${virtualPath} exceeds maximum line limit of 999,999 lines.`, {
      code: 'limit',
    });
  }
  let first = 1;
  let last = lines.length;
  if (viewRange !== undefined) {
    [first, last] = checkViewRange(viewRange, lines.length);
  }
  return renderNumberedLines({
    header: `Here's the content of ${virtualPath} with line numbers:`,
    lines: first === 1 && last === lines.length ? lines : lines.slice(first - 1, last),
    firstNumber: first,
    totalLines: lines.length,
    maxChars: context.limits.maxViewChars,
  });
}

/**
 * Validates `view_range` against a file of `lineCount` lines and returns the inclusive 1-based
 * range. The messages follow Anthropic's text-editor tool, which the model already knows.
 */
function checkViewRange(viewRange: number[], lineCount: number): [number, number] {
  const shown = `[${viewRange.join(', ')}]`;
  if (viewRange.length !== 2 || !viewRange.every((value) => Number.isInteger(value))) {
    throw invalid(
      `Invalid \`view_range\`: ${shown}. It should be a list of two integers [start, end], 1-based, with end -1 meaning the end of the file.`,
    );
  }
  const [start, end] = viewRange as [number, number];
  if (start < 1 || start > Math.max(lineCount, 1)) {
    throw invalid(
      `Invalid \`view_range\`: ${shown}. Its first element \`${start}\` should be within the range of lines of the file: [1, ${lineCount}]`,
    );
  }
  if (end === -1) return [start, lineCount];
  if (end < start) {
    throw invalid(
      `Invalid \`view_range\`: ${shown}. Its second element \`${end}\` should be larger or equal than its first \`${start}\``,
    );
  }
  if (end > lineCount) {
    throw invalid(
      `Invalid \`view_range\`: ${shown}. Its second element \`${end}\` should be smaller than or equal to the number of lines in the file: \`${lineCount}\``,
    );
  }
  return [start, end];
}

function invalid(message: string): MemoryToolError {
  return new MemoryToolError(message, { code: 'invalid_input' });
}
