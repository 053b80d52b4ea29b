import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { isValidProjectId } from '@baton/projects/schema';
import { CliError } from '../errors.js';
import { parseNonEmpty } from '../internal/argument-parsers.js';
import { withControl } from '../internal/remote-control.js';
import { outputJson } from '../internal/terminal-text.js';
import { projectJson } from './status.js';

interface AdoptOptions {
  list?: boolean;
  goal?: string;
  goalFile?: string;
  base?: string;
  json?: boolean;
}

/**
 * `baton adopt`: the code of a project Redis lost is on its branch `baton/<id>`, its memory and
 * goal were only in Redis. `--list REPO` names the branches whose project Redis does not know;
 * `adopt REPO baton/<id> --goal ...` creates the project again on that branch's code (its first
 * session is an init session with empty memory) and queues it.
 */
export function registerAdoptCommand(program: Command): void {
  program
    .command('adopt')
    .description(
      "Take back a project Redis lost from its branch baton/<id>: --list shows the branches of a repository whose project Redis does not know; with a branch, the project is created again on that branch's code and queued. Its memory and goal were only in Redis: give the goal again; its first session is an init session on the branch's code.",
    )
    .argument('<repo>', 'the repository (path or URL) holding the branches')
    .argument('[branch]', 'the branch to adopt: baton/<project-id>')
    .option('--list', 'list the baton/<id> branches whose project Redis does not know')
    .option('--goal <text>', 'the goal (bullet lines "- ..." become features)', parseNonEmpty)
    .option('--goal-file <file>', 'read the goal from a file')
    .option(
      '--base <branch>',
      "the branch the work started from, for diffs (default: the repository's current or default branch)",
      parseNonEmpty,
    )
    .option('--json', 'print JSON')
    .action(async (repo: string, branch: string | undefined, options: AdoptOptions) => {
      if (options.list === true) {
        if (branch !== undefined) throw new CliError('usage', '--list takes no branch.');
        await listLost(repo, options.json === true);
        return;
      }
      if (branch === undefined) {
        throw new CliError('usage', 'give the branch to adopt (baton/<project-id>), or --list.');
      }
      const projectId = /^(?:refs\/heads\/)?baton\/(.+)$/u.exec(branch)?.[1];
      if (projectId === undefined || !isValidProjectId(projectId)) {
        throw new CliError(
          'usage',
          `${branch} is not a project branch: adopt takes baton/<project-id> (see baton adopt --list ${repo}).`,
        );
      }
      const goal = await readGoal(options);
      const branches = await projectBranches(repo);
      const found = branches.find((candidate) => candidate.projectId === projectId);
      if (found === undefined) {
        throw new CliError('not_found', `${repo} has no branch baton/${projectId}.`);
      }
      await withControl(async (control) => {
        if ((await control.getProject(projectId)) !== null) {
          throw new CliError(
            'usage',
            `project ${projectId} exists in Redis: nothing to adopt (baton status ${projectId}).`,
          );
        }
        // The branch's tip becomes the project's last checkpoint once its trailer says Baton made
        // it for this id (a branch someone else made is refused in one line).
        const project = await control.createProject({
          id: projectId,
          goal,
          repo,
          ...(options.base === undefined ? {} : { base: options.base }),
        });
        const queued = await control.enqueue(project.id);
        if (options.json === true) {
          process.stdout.write(
            `${outputJson({ ...projectJson(project), jobId: queued.jobId }, 2)}\n`,
          );
          return;
        }
        process.stdout.write(
          `adopted ${project.branch} of ${project.repo ?? repo} at ${(project.lastCheckpoint ?? found.head).slice(0, 12)} as project ${project.id} (job ${queued.jobId}); its memory was only in Redis, so its first session is an init session on the branch's code; follow it with: baton status ${project.id}\n`,
        );
      });
    });
}

/** `--list`: the branches whose project Redis does not know, each with the command adopting it. */
async function listLost(repo: string, json: boolean): Promise<void> {
  const branches = (await projectBranches(repo)).filter((branch) =>
    isValidProjectId(branch.projectId),
  );
  await withControl(async (control) => {
    const lost = [];
    for (const branch of branches) {
      if ((await control.getProject(branch.projectId)) === null) lost.push(branch);
    }
    if (json) {
      process.stdout.write(`${outputJson(lost, 2)}\n`);
      return;
    }
    if (lost.length === 0) {
      process.stdout.write(`no baton/<id> branch of ${repo} is missing from Redis\n`);
      return;
    }
    for (const branch of lost) {
      process.stdout.write(
        `${branch.branch}  ${branch.head.slice(0, 12)}  baton adopt ${repo} ${branch.branch} --goal ...\n`,
      );
    }
  });
}

async function projectBranches(repo: string) {
  // Loaded on use, so `--help` stays fast.
  const { WorkspaceError, listProjectBranches } = await import('@baton/workspace');
  try {
    return await listProjectBranches({ repo });
  } catch (error) {
    if (error instanceof WorkspaceError) throw new CliError('usage', error.message);
    throw error;
  }
}

async function readGoal(options: AdoptOptions): Promise<string> {
  if ((options.goal === undefined) === (options.goalFile === undefined)) {
    throw new CliError(
      'usage',
      'give exactly one of --goal and --goal-file: the goal was only in Redis',
    );
  }
  if (options.goalFile === undefined) return options.goal ?? '';
  try {
    return await readFile(options.goalFile, 'utf8');
  } catch {
    throw new CliError('usage', `cannot read --goal-file ${options.goalFile}`);
  }
}
