import type { Command } from 'commander';
import { toVirtualPath } from '@baton/core';
import type { RedisMemoryStore } from '@baton/storage-redis';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { parseNonEmpty, parseProjectId } from '../internal/argument-parsers.js';
import { CommandFailure } from '../internal/command-failure.js';
import { memoryGroup } from '../internal/memory-group.js';
import { memoryPathArgument, withProjectMemory } from '../internal/project-memory.js';
import { formatTable } from '../internal/table.js';
import { contentForOutput, outputJson } from '../internal/terminal-text.js';

interface HistoryOptions {
  json?: boolean;
  local?: boolean;
  show?: string;
}

/** One version in `baton memory history --json`. */
interface HistoryEntry {
  version: string;
  at: number;
  bytes: number;
  command: string;
  session: string | null;
}

function hasHistory(
  store: unknown,
): store is Pick<RedisMemoryStore, 'listHistory' | 'readHistory'> {
  return (
    typeof (store as RedisMemoryStore).listHistory === 'function' &&
    typeof (store as RedisMemoryStore).readHistory === 'function'
  );
}

/** `baton memory history ID PATH [--show VERSION] [--json] [--local]`. */
export function registerMemoryHistoryCommand(program: Command): void {
  memoryGroup(program)
    .command('history')
    .description(
      "List the kept versions of one memory file, newest (the current content) first; --show prints one version's content.",
    )
    .argument('<id>', 'project id', parseProjectId)
    .argument('<path>', 'memory file, e.g. /memories/progress.md or progress.md')
    .option('--show <version>', 'print the content of this version', parseNonEmpty)
    .option(
      '--json',
      'print a JSON object { path, versions: [...] } (or { path, version, content })',
    )
    .option(
      '--local',
      'a `baton run` project (its filesystem memory keeps no history: only the current version)',
    )
    .addHelpText('after', '\nRedis keeps the last 5 versions of each file.')
    .action(async (id: string, pathArgument: string, options: HistoryOptions) => {
      const storePath = memoryPathArgument(pathArgument);
      if (storePath === '') throw new CliError('usage', 'give a file path, not /memories itself.');
      const virtual = toVirtualPath(storePath);
      await withProjectMemory({ id, local: options.local }, async ({ store }) => {
        let versions: HistoryEntry[];
        let readVersion: (version: string) => Promise<string | null>;
        if (hasHistory(store)) {
          versions = (await store.listHistory(storePath)).map((version) => ({
            version: version.version,
            at: version.at,
            bytes: version.bytes,
            command: version.command,
            session: version.session ?? null,
          }));
          readVersion = (version) => store.readHistory(storePath, version);
        } else {
          // A local project's filesystem memory keeps only the current content.
          const stat = await store.stat(storePath);
          const content = stat?.kind === 'file' ? await store.read(storePath) : null;
          versions =
            stat?.kind === 'file' && content !== null
              ? [
                  {
                    version: 'current',
                    at: stat.modifiedAt,
                    bytes: stat.size,
                    command: 'current',
                    session: null,
                  },
                ]
              : [];
          readVersion = (version) => Promise.resolve(version === 'current' ? content : null);
        }
        if (versions.length === 0) {
          throw new CommandFailure(
            'not_found',
            EXIT_CODES.notFound,
            `no versions of ${virtual} in project ${id}.`,
          );
        }
        if (options.show !== undefined) {
          const content = await readVersion(options.show);
          if (content === null) {
            throw new CommandFailure(
              'not_found',
              EXIT_CODES.notFound,
              `no version ${options.show} of ${virtual}; list them with \`baton memory history ${id} ${virtual}\`.`,
            );
          }
          if (options.json === true) {
            process.stdout.write(
              `${outputJson({ path: virtual, version: options.show, content })}\n`,
            );
          } else {
            process.stdout.write(
              contentForOutput(content.endsWith('\n') ? content : `${content}\n`),
            );
          }
          return;
        }
        if (options.json === true) {
          process.stdout.write(`${outputJson({ path: virtual, versions }, 2)}\n`);
          return;
        }
        process.stdout.write(
          `${formatTable(
            ['VERSION', 'WRITTEN', 'BYTES', 'COMMAND', 'SESSION'],
            versions.map((version) => [
              version.version,
              new Date(version.at).toISOString(),
              String(version.bytes),
              version.command,
              version.session ?? '-',
            ]),
            [2],
          )}\n`,
        );
      });
    });
}
