import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { SEARCH_MAX_CHARACTERS, searchTextProblem, type SearchHit } from '@baton/session';
import { parsePositiveInteger, parseProjectId } from '../internal/argument-parsers.js';
import { withProjects } from '../internal/project-access.js';
import { terminalSafe } from '../internal/transcript-view.js';
import { outputJson, terminalText } from '../internal/terminal-text.js';

interface SearchCommandOptions {
  limit: number;
  json?: boolean;
  local?: boolean;
}

function parseSearchText(value: string): string {
  const problem = searchTextProblem(value);
  if (problem !== null) throw new InvalidArgumentError(`${problem}.`);
  return value.trim();
}

/** One line per hit: where (memory path and line, or session and turn), then the snippet. */
function formatHit(hit: SearchHit): string {
  const where =
    hit.source === 'memory'
      ? `memory ${hit.path}:${hit.line}`
      : `session ${hit.sessionNumber} turn ${hit.turn} ${hit.role === 'assistant' ? 'assistant' : 'user'} ${hit.block === 'text' ? (hit.textSource ?? 'text') : hit.block}`;
  return `${terminalSafe(where)}: ${terminalSafe(hit.snippet)}`;
}

/** `baton search ID TEXT`: where a project's transcripts and memory mention something. */
export function registerSearchCommand(program: Command): void {
  program
    .command('search')
    .description(
      "Find text (case-insensitive) in a project's memory files and session transcripts; prints one line per hit: the memory path and line, or the session, turn and block, and a snippet.",
    )
    .argument('<id>', 'project id', parseProjectId)
    .argument('<text>', `what to find (1-${SEARCH_MAX_CHARACTERS} characters)`, parseSearchText)
    .option('--limit <n>', 'most hits printed', parsePositiveInteger(10_000), 50)
    .option('--json', 'print JSON { hits: [...], truncated }')
    .option('--local', 'a `baton run` project (memory and transcripts under BATON_HOME)')
    .addHelpText(
      'after',
      '\nMemory hits come first, then transcripts from the newest session. No hit is not an error (exit 0).\nReads REDIS_URL (default redis://127.0.0.1:6379) and BATON_PREFIX, or BATON_HOME with --local.',
    )
    .action(async (id: string, text: string, options: SearchCommandOptions) => {
      const result = await withProjects(options, (projects) =>
        projects.search(id, text, { limit: options.limit }),
      );
      if (options.json === true) {
        process.stdout.write(`${outputJson(result)}\n`);
        return;
      }
      if (result.hits.length === 0) {
        process.stderr.write(`nothing in project ${id} matches ${outputJson(text)}.\n`);
        return;
      }
      for (const hit of result.hits) process.stdout.write(`${terminalText(formatHit(hit))}\n`);
      if (result.truncated) {
        process.stderr.write(`more hits not shown: raise --limit (now ${options.limit}).\n`);
      }
    });
}
