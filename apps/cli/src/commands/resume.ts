import type { Command } from 'commander';
import { parseProjectId } from '../internal/argument-parsers.js';
import { withControl } from '../internal/remote-control.js';
import { projectJson } from './status.js';
import { outputJson } from '../internal/terminal-text.js';

/** `baton resume ID`: continue a paused, cancelled or failed project. */
export function registerResumeCommand(program: Command): void {
  program
    .command('resume')
    .description('Continue a paused, cancelled or failed project: queue its next session.')
    .argument('<id>', 'project id', parseProjectId)
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
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
