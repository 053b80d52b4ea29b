import type { Command } from 'commander';
import { TRANSCRIPT_BLOCK_MAX_CHARACTERS, TRANSCRIPT_SESSIONS_KEPT } from '@baton/session';
import { parsePositiveInteger, parseProjectId } from '../internal/argument-parsers.js';
import { CommandFailure } from '../internal/command-failure.js';
import { EXIT_CODES } from '../exit-codes.js';
import { withProjects } from '../internal/project-access.js';
import { formatTranscript } from '../internal/transcript-view.js';
import { outputJson, terminalText } from '../internal/terminal-text.js';

interface TranscriptOptions {
  session?: number;
  json?: boolean;
  local?: boolean;
}

/** `baton transcript ID [--session N]`: what a project's sessions said and did. */
export function registerTranscriptCommand(program: Command): void {
  program
    .command('transcript')
    .description(
      `Print a project's session transcripts: the first prompt, each model message with its tool calls and their inputs, each tool result (cut to ${TRANSCRIPT_BLOCK_MAX_CHARACTERS} characters, marked), usage and context edits per turn, and operator guidance, with secrets redacted.`,
    )
    .argument('<id>', 'project id', parseProjectId)
    .option(
      '--session <n>',
      'only session N (a session resumed after a crash shows both attempts)',
      parsePositiveInteger(1_000_000),
    )
    .option('--json', 'print one JSON object per session (one per line), with a messages array')
    .option('--local', 'a `baton run` project (transcripts under BATON_HOME)')
    .addHelpText(
      'after',
      `\nReads REDIS_URL (default redis://127.0.0.1:6379) and BATON_PREFIX, or BATON_HOME with --local.\nThe latest ${TRANSCRIPT_SESSIONS_KEPT} sessions of a project are kept (docs/sessions.md#transcripts).`,
    )
    .action(async (id: string, options: TranscriptOptions) => {
      await withProjects(options, async (projects) => {
        await projects.requireProject(id);
        const transcripts = await projects.transcripts(id);
        const all = await transcripts.list();
        const chosen =
          options.session === undefined
            ? all
            : all.filter((summary) => summary.sessionNumber === options.session);
        if (chosen.length === 0) {
          if (options.session !== undefined) {
            const kept = all.map((summary) => summary.sessionNumber);
            throw new CommandFailure(
              'not_found',
              EXIT_CODES.notFound,
              `no transcript of session ${options.session} of project ${id}${kept.length === 0 ? ' (none kept yet)' : ` (kept: sessions ${Math.min(...kept)}-${Math.max(...kept)})`}.`,
            );
          }
          if (options.json !== true)
            process.stderr.write(`project ${id} has no transcripts yet.\n`);
          return;
        }
        for (const summary of chosen) {
          const transcript = await transcripts.read(summary.sessionId);
          // Removed by retention between the listing and the read: nothing to show.
          if (transcript === null) continue;
          process.stdout.write(
            options.json === true
              ? `${outputJson(transcript)}\n`
              : `${terminalText(formatTranscript(transcript))}\n`,
          );
        }
      });
    });
}
