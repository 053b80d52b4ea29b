import type { Command } from 'commander';
import { parseProjectId } from '../internal/argument-parsers.js';
import { withProjects, type ProjectAccessOptions } from '../internal/project-access.js';
import { projectJson } from './status.js';
import { outputJson } from '../internal/terminal-text.js';

/** `baton cancel ID`: stop a project; its running session gets its end-of-session turn. */
export function registerCancelCommand(program: Command): void {
  program
    .command('cancel')
    .description(
      'Cancel a project: remove its queued session and abort the running one (which still writes its end-of-session notes).',
    )
    .argument('<id>', 'project id', parseProjectId)
    .option('--json', 'print JSON')
    .option(
      '--local',
      'a `baton run` project under BATON_HOME: the `baton run` running it, in any process, stops its session and exits 130',
    )
    .addHelpText(
      'after',
      '\nReads REDIS_CLUSTER_NODES or REDIS_URL (default redis://127.0.0.1:6379) and BATON_PREFIX unless --local. Cancelling an already cancelled project is ok (exit 0); a completed one is refused (exit 2).',
    )
    .action(async (id: string, options: ProjectAccessOptions & { json?: boolean }) => {
      await withProjects(options, async (projects) => {
        const result = await projects.cancel(id);
        const next = projects.kind === 'local' ? `baton run --project ${id}` : `baton resume ${id}`;
        process.stdout.write(
          options.json === true
            ? `${outputJson({ ...projectJson(result.project), removedJobId: result.removedJobId }, 2)}\n`
            : `cancelled project ${id}; continue it with: ${next}\n`,
        );
      });
    });
}
