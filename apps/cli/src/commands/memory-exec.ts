import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { createMemoryTool, type MemoryToolResult } from '@baton/core';
import { composeBeforeWrite, createChecklistGuard, createRedactionHook } from '@baton/session';
import { parseProjectId } from '../internal/argument-parsers.js';
import { memoryGroup } from '../internal/memory-group.js';
import { withProjectMemory } from '../internal/project-memory.js';
import { outputJson } from '../internal/terminal-text.js';

interface ExecOptions {
  local?: boolean;
  guard: boolean;
}

/** `baton memory exec ID`: memory-tool commands as JSON lines on stdin, results as JSON lines on stdout. */
export function registerMemoryExecCommand(program: Command): void {
  memoryGroup(program)
    .command('exec')
    .description(
      'Run memory-tool commands read as JSON lines on stdin (e.g. {"command":"view","path":"/memories"}); print one {"content","isError"} line each.',
    )
    .argument('<id>', 'project id', parseProjectId)
    .option('--local', 'a `baton run` project under BATON_HOME instead of one on Redis')
    .option(
      '--no-guard',
      'skip the checklist guard and secret redaction the agent sessions apply to writes',
    )
    .addHelpText(
      'after',
      '\nCommands run in order, exactly as the agent\'s memory tool runs them. A line that is not JSON\ngets {"content":"...","isError":true}.',
    )
    .action(async (id: string, options: ExecOptions) => {
      await withProjectMemory({ id, local: options.local }, async ({ store }) => {
        const tool = createMemoryTool({
          store,
          session: 'baton-cli',
          ...(options.guard
            ? {
                hooks: {
                  beforeWrite: composeBeforeWrite(createRedactionHook(), createChecklistGuard()),
                },
              }
            : {}),
        });
        const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
        let number = 0;
        for await (const line of lines) {
          number += 1;
          if (line.trim() === '') continue;
          let result: MemoryToolResult;
          try {
            result = await tool.execute(JSON.parse(line) as unknown);
          } catch (error) {
            result = {
              content: `line ${number} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
              isError: true,
            };
          }
          process.stdout.write(
            `${outputJson({ content: result.content, isError: result.isError })}\n`,
          );
        }
      });
    });
}
