import type { Command } from 'commander';
import type { OperatorGuidance } from '@baton/session';
import { parseProjectId } from '../internal/argument-parsers.js';
import { requireLocalProject } from '../internal/local-projects.js';
import { toCommandFailure, withControl } from '../internal/remote-control.js';
import { outputJson } from '../internal/terminal-text.js';

/**
 * Guidance for a `baton run` project, kept in its directory for the run's session to read. A
 * local record shows no session while none is running (`activeSession`).
 */
async function sayLocal(
  id: string,
  text: string,
): Promise<{ guidance: OperatorGuidance; running: boolean }> {
  const {
    createFileGuidance,
    fileProjectPaths,
    isTerminalStatus,
    parseGuidanceText,
    ProjectError,
  } = await import('@baton/projects');
  try {
    const valid = parseGuidanceText(text);
    const project = await requireLocalProject(id);
    if (isTerminalStatus(project.record.status)) {
      throw new ProjectError(
        'conflict',
        `project ${id} is ${project.record.status}; guidance reaches only a queued, running or paused project`,
      );
    }
    const guidance = await createFileGuidance(fileProjectPaths(project.home, id)).add(valid);
    return { guidance, running: project.record.activeSession !== null };
  } catch (error) {
    throw toCommandFailure(error);
  }
}

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
      const { guidance, running } =
        options.local === true
          ? await sayLocal(id, text)
          : await withControl(async (control) => {
              const said = await control.say(id, text);
              return { guidance: said.guidance, running: said.project.activeSession !== null };
            });
      process.stdout.write(
        options.json === true
          ? `${outputJson({ projectId: id, ...guidance, sessionRunning: running }, 2)}\n`
          : `sent guidance ${guidance.id} to project ${id}; ${running ? 'the running session gets it at its next model turn' : 'its next session gets it'}\n`,
      );
    });
}
