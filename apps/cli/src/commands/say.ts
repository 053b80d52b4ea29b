import type { Command } from 'commander';
import { parseProjectId } from '../internal/argument-parsers.js';
import { withProjects } from '../internal/project-access.js';
import { outputJson } from '../internal/terminal-text.js';

/** `baton say ID TEXT`: guidance for a project's running (or next) session. */
export function registerSayCommand(program: Command): void {
  program
    .command('say')
    .description(
      "Send guidance to a project: the running session gets it at its next model turn as a user message marked as operator guidance; a session that never answered it passes it to the next session's first message.",
    )
    .argument('<id>', 'project id', parseProjectId)
    .argument('<text>', 'the guidance (1-4000 characters)')
    .option('--local', 'a `baton run` project under BATON_HOME instead of one on Redis')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nReads REDIS_CLUSTER_NODES or REDIS_URL (default redis://127.0.0.1:6379) and BATON_PREFIX unless --local.',
    )
    .action(async (id: string, text: string, options: { json?: boolean; local?: boolean }) => {
      // Locally, the running `baton run` reads the project's guidance file at its next turn.
      const { guidance, sessionRunning: running } = await withProjects(options, (projects) =>
        projects.say(id, text),
      );
      process.stdout.write(
        options.json === true
          ? `${outputJson({ projectId: id, ...guidance, sessionRunning: running }, 2)}\n`
          : `sent guidance ${guidance.id} to project ${id}; ${running ? 'the running session gets it at its next model turn' : 'its next session gets it'}\n`,
      );
    });
}
