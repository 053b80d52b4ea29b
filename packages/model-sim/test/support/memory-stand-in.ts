/**
 * A tiny map-based memory tool for the simulator's own tests, returning the protocol strings of
 * /work/shared/spec/memory-tool.md. (@baton/core's handler is the real one; model-sim does not
 * depend on core, so its tests carry this stand-in.)
 */
export interface ToolOutcome {
  content: string;
  isError: boolean;
}

export interface MemoryStandIn {
  files: Map<string, string>;
  execute(input: unknown): ToolOutcome;
  /** Makes the next `count` writes to `path` fail with `message` (like a before-write guard). */
  refuseWrites(path: string, message: string, count?: number): void;
}

function numbered(text: string): string {
  return text
    .split('\n')
    .map((line, index) => `${String(index + 1).padStart(6, ' ')}\t${line}`)
    .join('\n');
}

export function createMemoryStandIn(initial: Record<string, string> = {}): MemoryStandIn {
  const files = new Map(Object.entries(initial));
  const refusals = new Map<string, { message: string; count: number }>();
  const ok = (content: string): ToolOutcome => ({ content, isError: false });
  const fail = (content: string): ToolOutcome => ({ content, isError: true });

  const refused = (path: string): ToolOutcome | undefined => {
    const refusal = refusals.get(path);
    if (!refusal || refusal.count <= 0) return undefined;
    refusal.count -= 1;
    return fail(refusal.message);
  };

  return {
    files,
    refuseWrites(path, message, count = 1) {
      refusals.set(path, { message, count });
    },
    execute(raw) {
      const input = raw as Record<string, unknown>;
      const path = String(input['path'] ?? '');
      switch (input['command']) {
        case 'view': {
          if (path === '/memories') {
            const lines = [...files.entries()].map(([name, text]) => `${text.length}\t${name}`);
            return ok(
              [
                `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:`,
                `4.0K\t/memories`,
                ...lines,
              ].join('\n'),
            );
          }
          const text = files.get(path);
          if (text === undefined)
            return fail(`The path ${path} does not exist. Please provide a valid path.`);
          return ok(`Here's the content of ${path} with line numbers:\n${numbered(text)}`);
        }
        case 'create': {
          if (files.has(path)) return fail(`Error: File ${path} already exists`);
          const refusal = refused(path);
          if (refusal) return refusal;
          files.set(path, String(input['file_text'] ?? ''));
          return ok(`File created successfully at: ${path}`);
        }
        case 'str_replace': {
          const text = files.get(path);
          if (text === undefined)
            return fail(`Error: The path ${path} does not exist. Please provide a valid path.`);
          const oldStr = String(input['old_str'] ?? '');
          const count = text.split(oldStr).length - 1;
          if (count === 0) {
            return fail(
              `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`,
            );
          }
          if (count > 1)
            return fail(
              `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\`. Please ensure it is unique`,
            );
          const refusal = refused(path);
          if (refusal) return refusal;
          files.set(path, text.replace(oldStr, String(input['new_str'] ?? '')));
          return ok(`The memory file has been edited.`);
        }
        case 'insert': {
          const text = files.get(path);
          if (text === undefined) return fail(`Error: The path ${path} does not exist`);
          const lines = text.split('\n');
          const at = Number(input['insert_line']);
          if (!Number.isInteger(at) || at < 0 || at > lines.length) {
            return fail(
              `Error: Invalid \`insert_line\` parameter: ${String(input['insert_line'])}. It should be within the range of lines of the file: [0, ${lines.length}]`,
            );
          }
          const refusal = refused(path);
          if (refusal) return refusal;
          lines.splice(at, 0, ...String(input['insert_text'] ?? '').split('\n'));
          files.set(path, lines.join('\n'));
          return ok(`The file ${path} has been edited.`);
        }
        case 'delete': {
          if (!files.delete(path)) return fail(`Error: The path ${path} does not exist`);
          return ok(`Successfully deleted ${path}`);
        }
        default:
          return fail(`Unknown command ${String(input['command'])}`);
      }
    },
  };
}
