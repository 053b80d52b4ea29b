import type { Command } from 'commander';
import { parseProjectId } from '../internal/argument-parsers.js';
import { withProjects, type ProjectAccessOptions } from '../internal/project-access.js';
import { projectJson } from './status.js';
import { outputJson } from '../internal/terminal-text.js';

/** `baton pause ID`: stop a project after its current session, without cancelling it. */
export function registerPauseCommand(program: Command): void {
  program
    .command('pause')
    .description(
      'Pause a project: a queued session is removed; a running one writes its end-of-session notes and then no next session starts, until `baton resume`. Unlike cancel, the project is paused (reason "paused by operator").',
    )
    .argument('<id>', 'project id', parseProjectId)
    .option('--json', 'print JSON')
    .option(
      '--local',
      'a `baton run` project under BATON_HOME: the `baton run` running it, in any process, stops after its current session',
    )
    .addHelpText(
      'after',
      '\nReads REDIS_CLUSTER_NODES or REDIS_URL (default redis://127.0.0.1:6379) and BATON_PREFIX unless --local. Pausing an already paused project is ok (exit 0).',
    )
    .action(async (id: string, options: ProjectAccessOptions & { json?: boolean }) => {
      await withProjects(options, async (projects) => {
        const local = projects.kind === 'local';
        const result = await projects.pause(id);
        if (options.json === true) {
          process.stdout.write(
            `${outputJson(
              {
                ...projectJson(result.project),
                changed: result.changed,
                removedJobId: result.removedJobId,
                runningSessionId: result.runningSessionId,
              },
              2,
            )}\n`,
          );
          return;
        }
        const what = !result.changed
          ? `project ${id} is already paused`
          : result.runningSessionId !== null
            ? `pausing project ${id}: its running session writes its notes and stops`
            : `paused project ${id}`;
        const next = local ? `baton run --project ${id}` : `baton resume ${id}`;
        process.stdout.write(`${what}; continue it with: ${next}\n`);
      });
    });
}
