import type { Command } from 'commander';
import { parseProjectId } from '../internal/argument-parsers.js';
import { CliError } from '../errors.js';
import { withControl } from '../internal/remote-control.js';
import { withProjects } from '../internal/project-access.js';
import { projectJson } from './status.js';
import { outputJson } from '../internal/terminal-text.js';

/** `baton resume ID`: continue a paused, cancelled or failed project. */
export function registerResumeCommand(program: Command): void {
  program
    .command('resume')
    .description('Continue a paused, cancelled or failed project: queue its next session.')
    .argument('<id>', 'project id', parseProjectId)
    .option('--json', 'print JSON')
    .option(
      '--local',
      'a `baton run` project under BATON_HOME: refused, naming `baton run --project ID`, which resumes it (nothing runs a local project but baton run)',
    )
    .action(async (id: string, options: { json?: boolean; local?: boolean }) => {
      if (options.local === true) {
        // Said only of a project that exists (else exit 7, as for every --local verb).
        await withProjects({ local: true }, (projects) => projects.requireProject(id));
        throw new CliError(
          'usage',
          `a \`baton run\` project has no queue to resume into: \`baton run --project ${id}\` resumes it and runs its sessions.`,
        );
      }
      await withControl(async (control) => {
        const result = await control.resume(id);
        process.stdout.write(
          options.json
            ? `${outputJson({ ...projectJson(result.project), jobId: result.jobId }, 2)}\n`
            : `resumed project ${id} (job ${result.jobId})\n`,
        );
      });
    });
}
