import { toVirtualPath } from '@baton/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { parsePositiveInteger, parseProjectId } from '../internal/argument-parsers.js';
import { CommandFailure } from '../internal/command-failure.js';
import { EXIT_CODES } from '../exit-codes.js';
import { memoryGroup } from '../internal/memory-group.js';
import { memoryPathArgument, withProjectMemory } from '../internal/project-memory.js';
import { contentForOutput, outputJson } from '../internal/terminal-text.js';

interface ReadOptions {
  json?: boolean;
  local?: boolean;
}

/** `baton memory ls|cat ID [PATH]`: read a project's memory (Redis, or `--local` for `baton run`). */
export function registerMemoryCommand(program: Command): void {
  const memory = memoryGroup(program);

  memory
    .command('ls')
    .description('List a memory directory (default /memories).')
    .argument('<id>', 'project id', parseProjectId)
    .argument('[path]', 'directory, e.g. /memories or notes')
    .option('--depth <n>', 'levels to list', parsePositiveInteger(100), 2)
    .option('--json', 'print JSON')
    .option('--local', 'a `baton run` project (filesystem memory under BATON_HOME)')
    .action(
      async (
        id: string,
        pathArgument: string | undefined,
        options: ReadOptions & { depth: number },
      ) => {
        const directory = pathArgument === undefined ? '' : memoryPathArgument(pathArgument);
        await withProjectMemory({ id, local: options.local }, async ({ store }) => {
          const stat = await store.stat(directory);
          if (stat === null) throw notFound(directory);
          if (stat.kind !== 'directory') {
            throw new CliError(
              'usage',
              `${toVirtualPath(directory)} is a file; use baton memory cat.`,
            );
          }
          const entries = await store.list(directory, { depth: options.depth });
          if (options.json) {
            const listed = entries.map((entry) => ({ ...entry, path: toVirtualPath(entry.path) }));
            process.stdout.write(`${outputJson(listed, 2)}\n`);
            return;
          }
          for (const entry of entries) {
            const size = entry.kind === 'directory' ? '-' : String(entry.size);
            const suffix = entry.kind === 'directory' ? '/' : '';
            process.stdout.write(`${size.padStart(9)}  ${toVirtualPath(entry.path)}${suffix}\n`);
          }
        });
      },
    );

  registerLogCommand(memory);

  memory
    .command('cat')
    .description('Print a memory file.')
    .argument('<id>', 'project id', parseProjectId)
    .argument('<path>', 'file, e.g. /memories/progress.md or progress.md')
    .option('--json', 'print JSON { path, content }')
    .option('--local', 'a `baton run` project (filesystem memory under BATON_HOME)')
    .action(async (id: string, pathArgument: string, options: ReadOptions) => {
      const file = memoryPathArgument(pathArgument);
      if (file === '')
        throw new CliError('usage', '/memories is a directory; use baton memory ls.');
      await withProjectMemory({ id, local: options.local }, async ({ store }) => {
        const stat = await store.stat(file);
        if (stat === null) throw notFound(file);
        if (stat.kind === 'directory') {
          throw new CliError(
            'usage',
            `${toVirtualPath(file)} is a directory; use baton memory ls.`,
          );
        }
        const content = (await store.read(file)) ?? '';
        process.stdout.write(
          options.json
            ? `${outputJson({ path: toVirtualPath(file), content })}\n`
            : contentForOutput(content),
        );
      });
    });
}

/** `baton memory log ID`: the whole progress log, archived entries included, oldest first. */
function registerLogCommand(memory: Command): void {
  memory
    .command('log')
    .description(
      'Print the whole progress log: the entries archived under /memories/progress/, then progress.md.',
    )
    .argument('<id>', 'project id', parseProjectId)
    .option('--json', 'print JSON { entries: [{ heading, session, text }] }')
    .option('--local', 'a `baton run` project (filesystem memory under BATON_HOME)')
    .action(async (id: string, options: ReadOptions) => {
      // Loaded on use, so the other verbs do not pay for the session package.
      const { readProgressEntries, readProgressLog } = await import('@baton/session');
      await withProjectMemory({ id, local: options.local }, async ({ store }) => {
        const log = await readProgressLog(store);
        if (log === null) throw notFound('progress.md');
        process.stdout.write(
          options.json
            ? `${outputJson({ entries: await readProgressEntries(store) })}\n`
            : contentForOutput(log),
        );
      });
    });
}

function notFound(path: string): CommandFailure {
  return new CommandFailure('not_found', EXIT_CODES.notFound, `nothing at ${toVirtualPath(path)}.`);
}
