#!/usr/bin/env node
// The `baton` command: this file only registers commands (one file each under commands/).
// First: a reader that goes away (`baton ... | head`) ends baton quietly with status 0.
import './internal/exit-quietly-on-closed-pipe.js';
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerRunCommand } from './commands/run.js';
import { errorLine } from './internal/terminal-text.js';
import { registerSimCommand } from './commands/sim.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerEnqueueCommand } from './commands/enqueue.js';
import { registerResumeCommand } from './commands/resume.js';
import { registerCancelCommand } from './commands/cancel.js';
import { registerStatusCommand } from './commands/status.js';
import { registerMemoryCommand } from './commands/memory.js';
import { registerUpCommand } from './commands/up.js';
import { registerLogsCommand } from './commands/logs.js';
import { registerProjectsCommand } from './commands/projects.js';
import { registerMemoryHistoryCommand } from './commands/memory-history.js';
import { registerMemoryTransferCommands } from './commands/memory-transfer.js';
import { registerMemoryExecCommand } from './commands/memory-exec.js';
import { registerDashboardCommand } from './commands/dashboard.js';
import { registerDiffCommand } from './commands/diff.js';
import { registerChecksCommand } from './commands/checks.js';
import { registerPauseCommand } from './commands/pause.js';
import { registerSayCommand } from './commands/say.js';
import { registerSearchCommand } from './commands/search.js';
import { registerTranscriptCommand } from './commands/transcript.js';
import { registerAdoptCommand } from './commands/adopt.js';
import { CliError } from './errors.js';
import { EXIT_CODES, EXIT_CODE_POINTER, EXIT_CODE_TABLE } from './exit-codes.js';

// Registration order is the order `baton --help` lists the verbs in. `memory` creates the memory
// group (ls, cat) that the history, export/import and exec verbs then attach to.
const commands: Array<(program: Command) => void> = [
  // In-process runs and the simulator: no Redis.
  registerRunCommand,
  registerSimCommand,
  // Projects on Redis.
  registerWorkerCommand,
  registerEnqueueCommand,
  registerResumeCommand,
  registerCancelCommand,
  registerStatusCommand,
  registerMemoryCommand,
  registerUpCommand,
  registerLogsCommand,
  registerProjectsCommand,
  registerMemoryHistoryCommand,
  registerMemoryTransferCommands,
  registerMemoryExecCommand,
  registerDashboardCommand,
  // A project's branch against its base.
  registerDiffCommand,
  // Verified progress: each feature's check and its evidence.
  registerChecksCommand,
  // Operating a running project: pause and guidance.
  registerPauseCommand,
  registerSayCommand,
  // Reading what sessions did: transcripts and search.
  registerTranscriptCommand,
  registerSearchCommand,
  // Projects Redis lost: their branches, taken back.
  registerAdoptCommand,
];

const program = new Command('baton')
  .description(
    'Run long coding tasks as a chain of Claude agent sessions that hand over through memory.',
  )
  .showSuggestionAfterError(true)
  .exitOverride()
  // Commander's own mistakes (unknown verb or flag, missing or invalid argument) read like ours:
  // one line, `baton: <message>`, its suggestion folded in.
  .configureOutput({ outputError: (text, write) => write(`${oneErrorLine(text)}\n`) });

/** `error: unknown command 'stauts'\n(Did you mean status?)` -> `baton: unknown command 'stauts' (did you mean status?)`. */
function oneErrorLine(text: string): string {
  const message = text
    .trim()
    .replace(/^error: /u, '')
    .replace(/\n\(Did you mean /u, ' (did you mean ')
    .replace(/\s*\n\s*/gu, ' ');
  return `baton: ${message}`;
}
const { version } = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
) as { version: string };
program.version(version, '-V, --version', 'print the version of baton');
for (const register of commands) register(program);
program.addHelpText('after', `\n${EXIT_CODE_TABLE}`);
/** Every verb and sub-verb points at the one table instead of listing codes of its own. */
function pointAtExitCodes(command: Command): void {
  for (const sub of command.commands) {
    sub.addHelpText('after', `\n${EXIT_CODE_POINTER}`);
    pointAtExitCodes(sub);
  }
}
pointAtExitCodes(program);
/** A group named without its verb (`baton memory`), or with an unknown one, says so in one line. */
function requireSubcommand(command: Command, path: string): void {
  for (const sub of command.commands) {
    if (sub.commands.length === 0) continue;
    const name = path === '' ? sub.name() : `${path} ${sub.name()}`;
    const verbs = sub.commands.map((verb) => verb.name()).join(', ');
    sub
      .helpCommand(true)
      .allowExcessArguments(true)
      .action((_options: unknown, self: Command) => {
        const given = self.args[0];
        throw new CliError(
          'usage',
          given === undefined
            ? `${name} needs one of: ${verbs} (see baton ${name} --help).`
            : `unknown command '${name} ${given}'; ${name} has: ${verbs}.`,
        );
      });
    requireSubcommand(sub, name);
  }
}
requireSubcommand(program, '');

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version exit 0; every parsing mistake was already printed as one line.
    process.exitCode = error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
  } else if (error instanceof CliError) {
    // A message may quote what a remote, a snapshot or the model wrote: shown, never acted on.
    process.stderr.write(`baton: ${errorLine(error.message)}\n`);
    process.exitCode = error.exitCode;
  } else {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`baton: unexpected error: ${errorLine(message)}\n`);
    process.exitCode = EXIT_CODES.internal;
  }
}
