import type { Command } from 'commander';
import type { ProjectRecord } from '@baton/projects';
import { WorkspaceError, diffProjectBranch, workspaceGitPaths } from '@baton/workspace';
import { parseProjectId } from '../internal/argument-parsers.js';
import { CommandFailure } from '../internal/command-failure.js';
import { EXIT_CODES } from '../exit-codes.js';
import { batonHome } from '../internal/project-home.js';
import { withProjects } from '../internal/project-access.js';
import { contentForOutput, outputJson } from '../internal/terminal-text.js';

interface DiffOptions {
  stat?: boolean;
  local?: boolean;
  json?: boolean;
}

async function printDiff(source: ProjectRecord, options: DiffOptions): Promise<void> {
  const home = batonHome();
  const paths = workspaceGitPaths(home, source.id);
  let diff;
  try {
    diff = await diffProjectBranch({
      projectId: source.id,
      remote: source.repo ?? paths.localRemote,
      baseCommit: source.baseCommit,
      cacheDir: paths.diffCache,
      stat: options.stat === true,
    });
  } catch (error) {
    if (error instanceof WorkspaceError) {
      throw new CommandFailure('internal', EXIT_CODES.internal, error.message, { cause: error });
    }
    throw error;
  }
  if (options.json === true) {
    process.stdout.write(
      `${outputJson({ id: source.id, ...diff, baseCommit: source.baseCommit }, 2)}\n`,
    );
    return;
  }
  if (diff.head === null) {
    process.stderr.write(`${diff.branch} has no checkpoint yet.\n`);
    return;
  }
  process.stdout.write(contentForOutput(diff.text));
}

/** `baton diff ID [--stat]`: the project branch against its base, as the repository has it now. */
export function registerDiffCommand(program: Command): void {
  program
    .command('diff')
    .description(
      "Show a project's branch (baton/<id>) against its base commit, fetched from the project's repository.",
    )
    .argument('<id>', 'project id', parseProjectId)
    .option('--stat', 'a summary of changed files instead of the full patch')
    .option('--local', 'a `baton run` project under BATON_HOME instead of one on Redis')
    .option('--json', 'print JSON: branch, head, commits since the base, the diff text')
    .addHelpText(
      'after',
      '\nReads REDIS_CLUSTER_NODES or REDIS_URL and BATON_PREFIX unless --local; fetches into BATON_HOME/cache.',
    )
    .action(async (id: string, options: DiffOptions) => {
      const project = await withProjects(options, (projects) => projects.requireProject(id));
      await printDiff(project, options);
    });
}
