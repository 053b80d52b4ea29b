import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolOutcome } from './memory-stand-in.js';

/** Real bash and text-editor tools confined (loosely: tests only) to a temp workspace. */
export interface WorkspaceTools {
  root: string;
  /** Commands run so far. */
  commands: string[];
  bash(input: unknown): Promise<ToolOutcome>;
  editor(input: unknown): Promise<ToolOutcome>;
  /** Makes the next `count` bash commands fail with `output`. */
  failNextCommands(output: string, count?: number): void;
}

function inside(root: string, relative: string): string {
  const resolved = path.resolve(root, relative);
  if (!resolved.startsWith(root + path.sep))
    throw new Error(`The path ${relative} is outside the workspace.`);
  return resolved;
}

export function createWorkspaceTools(root: string): WorkspaceTools {
  const commands: string[] = [];
  let failures: { output: string; count: number } | undefined;
  return {
    root,
    commands,
    failNextCommands(output, count = 1) {
      failures = { output, count };
    },
    bash(raw) {
      const command = String((raw as { command?: unknown }).command ?? '');
      commands.push(command);
      if (failures && failures.count > 0) {
        failures.count -= 1;
        return Promise.resolve({ content: failures.output, isError: true });
      }
      return new Promise((resolve) => {
        execFile('sh', ['-c', command], { cwd: root, timeout: 5_000 }, (error, stdout, stderr) => {
          const output = `${stdout}${stderr}`.trim();
          resolve({ content: output === '' ? '(no output)' : output, isError: error !== null });
        });
      });
    },
    async editor(raw) {
      const input = raw as Record<string, unknown>;
      try {
        const file = inside(root, String(input['path'] ?? ''));
        if (input['command'] === 'create') {
          await mkdir(path.dirname(file), { recursive: true });
          await writeFile(file, String(input['file_text'] ?? ''));
          return {
            content: `File created successfully at: ${String(input['path'])}`,
            isError: false,
          };
        }
        if (input['command'] === 'view') {
          const text = await readFile(file, 'utf8');
          return { content: text, isError: false };
        }
        return { content: `Unsupported command ${String(input['command'])}`, isError: true };
      } catch (error) {
        return { content: (error as Error).message, isError: true };
      }
    },
  };
}
