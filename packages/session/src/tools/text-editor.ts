import {
  createWorkspaceFiles,
  parseWorkspacePath,
  WorkspacePathError,
  type WorkspacePath,
} from '../internal/workspace-path.js';
import {
  shorten,
  stringField,
  type SessionTool,
  type ToolOutcome,
  type WorkspaceToolsOptions,
} from './types.js';

const DEFAULT_MAX_VIEW_CHARS = 16_000;
const DEFAULT_MAX_FILE_BYTES = 1_048_576;
const DEFAULT_MAX_LIST_ENTRIES = 1_000;
const LIST_DEPTH = 2;
const SNIPPET_LINES = 4;

/** Options of `createTextEditorTool`. */
export interface TextEditorToolOptions extends WorkspaceToolsOptions {
  /** Realpath of the workspace: every path must resolve inside it. */
  root: string;
}

function numbered(lines: readonly string[], firstLine: number): string {
  return lines.map((line, index) => `${String(firstLine + index).padStart(6)}\t${line}`).join('\n');
}

function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}K`;
  return `${(bytes / 1024 / 1024).toFixed(1)}M`;
}

function snippet(content: string, aroundLine: number, insertedLines: number): string {
  const lines = content.split('\n');
  const start = Math.max(0, aroundLine - SNIPPET_LINES);
  const end = Math.min(lines.length, aroundLine + insertedLines + SNIPPET_LINES);
  return numbered(lines.slice(start, end), start + 1);
}

const error = (content: string): ToolOutcome => ({ content, isError: true });

/**
 * The text editor (`text_editor_20250728`, name `str_replace_based_edit_tool`): view, create,
 * str_replace and insert, confined to the workspace (see `resolveWorkspacePath`). Output strings
 * follow the reference implementation the model was trained on.
 */
export function createTextEditorTool(options: TextEditorToolOptions): SessionTool {
  const maxViewChars = options.maxViewChars ?? DEFAULT_MAX_VIEW_CHARS;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxListEntries = options.maxListEntries ?? DEFAULT_MAX_LIST_ENTRIES;

  const files = createWorkspaceFiles({ root: options.root });

  function cut(body: string, what: string): string {
    if (body.length <= maxViewChars) return body;
    return `${body.slice(0, maxViewChars)}\n[... output cut at ${maxViewChars} characters: ${what} ...]`;
  }

  async function listDirectory(target: WorkspacePath, shown: string): Promise<string> {
    const { entries, truncated } = await files.list(target, LIST_DEPTH, maxListEntries);
    const prefix = target.relative === '.' ? '' : `${target.relative}/`;
    const lines = entries.map(
      (entry) =>
        `${humanSize(entry.size)}\t${prefix}${entry.relative}${entry.kind === 'directory' ? '/' : entry.kind === 'symlink' ? '@' : ''}`,
    );
    if (truncated) {
      lines.push(
        `[... listing stopped at ${maxListEntries} entries: view a subdirectory, or use bash (\`find ${shown} -maxdepth 1 | head\`) ...]`,
      );
    }
    return cut(
      `Here're the files and directories up to ${LIST_DEPTH} levels deep in ${shown}, excluding hidden items and node_modules:\n${lines.join('\n')}`,
      'view a subdirectory to see the rest',
    );
  }

  async function view(input: unknown, shown: string, target: WorkspacePath): Promise<ToolOutcome> {
    const info = await files.inspect(target);
    if (info === null)
      return error(`The path ${shown} does not exist. Please provide a valid path.`);
    if (info.kind === 'directory')
      return { content: await listDirectory(target, shown), isError: false };
    const content = await files.readText(target, maxFileBytes);
    const lines = content.split('\n');
    let first = 1;
    let last = lines.length;
    const range = (input as Record<string, unknown>).view_range;
    if (range !== undefined) {
      if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isInteger(n))) {
        return error(
          'Error: `view_range` must be two integers [start, end] (end -1 = to the end of the file).',
        );
      }
      const [start, end] = range as [number, number];
      if (
        start < 1 ||
        start > lines.length ||
        (end !== -1 && (end < start || end > lines.length))
      ) {
        return error(
          `Error: Invalid \`view_range\` ${JSON.stringify(range)}. The file has ${lines.length} lines.`,
        );
      }
      first = start;
      last = end === -1 ? lines.length : end;
    }
    const body = cut(
      numbered(lines.slice(first - 1, last), first),
      'use view_range to read the rest',
    );
    return {
      content: `Here's the content of ${shown} with line numbers:\n${body}`,
      isError: false,
    };
  }

  async function write(target: WorkspacePath, content: string): Promise<ToolOutcome | null> {
    if (Buffer.byteLength(content, 'utf8') > maxFileBytes) {
      return error(
        `Error: the file would be larger than ${maxFileBytes} bytes, the limit of the workspace editor.`,
      );
    }
    await files.writeText(target, content);
    return null;
  }

  async function readExisting(shown: string, target: WorkspacePath): Promise<string | ToolOutcome> {
    const info = await files.inspect(target);
    if (info === null || info.kind === 'directory') {
      return error(`Error: The path ${shown} does not exist. Please provide a valid path.`);
    }
    return files.readText(target, maxFileBytes);
  }

  async function execute(input: unknown): Promise<ToolOutcome> {
    const command = stringField(input, 'command');
    const shown = stringField(input, 'path');
    if (shown === undefined) return error('Error: the text editor needs a "path".');
    const target = parseWorkspacePath(options.root, shown);
    const record = input as Record<string, unknown>;
    switch (command) {
      case 'view':
        return view(input, shown, target);
      case 'create': {
        const text = stringField(input, 'file_text');
        if (text === undefined) return error('Error: `create` needs a "file_text" string.');
        const info = await files.inspect(target);
        if (info?.kind === 'directory') return error(`Error: ${shown} is a directory.`);
        return (
          (await write(target, text)) ?? {
            content: `File created successfully at: ${shown}`,
            isError: false,
          }
        );
      }
      case 'str_replace': {
        const oldText = stringField(input, 'old_str');
        if (oldText === undefined || oldText === '')
          return error('Error: `str_replace` needs a non-empty "old_str".');
        const newText = stringField(input, 'new_str') ?? '';
        const current = await readExisting(shown, target);
        if (typeof current !== 'string') return current;
        const occurrences: number[] = [];
        for (let at = current.indexOf(oldText); at !== -1; at = current.indexOf(oldText, at + 1)) {
          occurrences.push(current.slice(0, at).split('\n').length);
        }
        if (occurrences.length === 0) {
          return error(
            `Error: No replacement was performed, old_str \`${oldText}\` did not appear verbatim in ${shown}.`,
          );
        }
        if (occurrences.length > 1) {
          return error(
            `Error: No replacement was performed. Multiple occurrences of old_str \`${oldText}\` in lines: ${occurrences.join(', ')}. Please ensure it is unique`,
          );
        }
        const next = current.replace(oldText, () => newText);
        const failed = await write(target, next);
        if (failed) return failed;
        const line = (occurrences[0] ?? 1) - 1;
        return {
          content: `The file ${shown} has been edited. Here's the result of running \`cat -n\` on a snippet of ${shown}:\n${snippet(next, line, newText.split('\n').length)}\nReview the changes and make sure they are as expected. Edit the file again if necessary.`,
          isError: false,
        };
      }
      case 'insert': {
        const text = stringField(input, 'insert_text') ?? stringField(input, 'new_str');
        const line = record.insert_line;
        if (text === undefined) return error('Error: `insert` needs an "insert_text" string.');
        const current = await readExisting(shown, target);
        if (typeof current !== 'string') return current;
        const lines = current.split('\n');
        if (
          typeof line !== 'number' ||
          !Number.isInteger(line) ||
          line < 0 ||
          line > lines.length
        ) {
          return error(
            `Error: Invalid \`insert_line\` parameter: ${String(line)}. It should be within the range of lines of the file: [0, ${lines.length}]`,
          );
        }
        const inserted = text.split('\n');
        const next = [...lines.slice(0, line), ...inserted, ...lines.slice(line)].join('\n');
        const failed = await write(target, next);
        if (failed) return failed;
        return {
          content: `The file ${shown} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${snippet(next, line, inserted.length)}\nReview the changes (correct indentation, no duplicate lines, etc). Edit the file again if necessary.`,
          isError: false,
        };
      }
      default:
        return error(
          `Error: Unknown command ${JSON.stringify(command ?? null)}. The text editor supports view, create, str_replace and insert.`,
        );
    }
  }

  return {
    name: 'str_replace_based_edit_tool',
    definition: {
      type: 'text_editor_20250728',
      name: 'str_replace_based_edit_tool',
      max_characters: maxViewChars,
    },
    lane: 'workspace',
    async execute(input) {
      try {
        return await execute(input);
      } catch (caught) {
        // Refusals are written for the model; anything else says only which error it was.
        if (caught instanceof WorkspacePathError) return error(caught.message);
        const code = (caught as NodeJS.ErrnoException | undefined)?.code;
        return error(
          `Error: the text editor could not complete the command${code ? ` (${code})` : ''}.`,
        );
      }
    },
    summarize(input) {
      return shorten(`${stringField(input, 'command') ?? '?'} ${stringField(input, 'path') ?? ''}`);
    },
  };
}
