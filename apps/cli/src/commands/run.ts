import type { Command } from 'commander';
import { parsePositiveInteger, parseProjectId } from '../internal/argument-parsers.js';
import { PROJECT_OPTIONS_HELP, addProjectOptions } from '../internal/project-options.js';
import type { RunOptions } from '../internal/run-project.js';
import { COST_HELP } from '../internal/cost-help.js';
import { warnUnknownVariables } from '../internal/environment.js';

const DEFAULT_SESSIONS = 10;

/** `baton run`: init then resume sessions in-process until every feature passes. */
export function registerRunCommand(program: Command): void {
  const command = program
    .command('run')
    .description(
      'Run sessions of a project in this process (filesystem memory under BATON_HOME, no Redis) until every feature passes.',
    )
    .option(
      '--project <id>',
      'project id; an existing project continues from its memory, and the project options given replace its stored ones',
      parseProjectId,
    );
  addProjectOptions(command)
    .option(
      '--sessions <n>',
      "most sessions this process runs now, init included; not kept (--max-sessions is the project's limit)",
      parsePositiveInteger(1_000),
      DEFAULT_SESSIONS,
    )
    .option('--json', 'print events as JSON lines on stdout (messages go to stderr)')
    .option(
      '--no-sandbox',
      "run the agent's commands unsandboxed (explicit opt-out, same as BATON_SANDBOX=off; said at start and in every session's events). A setting of the process, as for `baton worker`: never kept for the project",
    )
    .addHelpText('after', `${PROJECT_OPTIONS_HELP}\n${COST_HELP}`)
    .action(async (options: RunOptions) => {
      await warnUnknownVariables('run');
      // Loaded on use, so `--help` and argument errors stay fast.
      const { runProject } = await import('../internal/run-project.js');
      process.exitCode = await runProject(options);
    });
}
