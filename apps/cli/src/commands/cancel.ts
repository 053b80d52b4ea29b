import type { Command } from 'commander';
import { parseProjectId } from '../internal/argument-parsers.js';
import { withControl } from '../internal/remote-control.js';
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
    .action(async (id: string, options: { json?: boolean }) => {
      await withControl(async (control) => {
        const result = await control.cancel(id);
        process.stdout.write(
          options.json
            ? `${outputJson({ ...projectJson(result.project), removedJobId: result.removedJobId }, 2)}\n`
            : `cancelled project ${id}; continue it with: baton resume ${id}\n`,
        );
      });
    });
}
