import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { MemoryStore } from '@baton/core';
import type { BatonControl } from '@baton/projects';
import type { MemorySnapshot } from '@baton/workspace';
import { isValidProjectId } from '@baton/projects/schema';
import { CliError } from '../errors.js';
import { parseNonEmpty } from '../internal/argument-parsers.js';
import { withControl } from '../internal/remote-control.js';
import { outputJson, terminalText } from '../internal/terminal-text.js';
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
 * goal on its memory snapshot `refs/baton/memory/<id>` (when sessions wrote one). `--list REPO`
 * names the branches whose project Redis does not know, each with its snapshot; `adopt REPO
 * baton/<id>` creates the project again on that branch's code, restores its memory and goal from
 * the snapshot (`--goal` overrides the goal) and queues it: a resume session. Without a usable
 * snapshot the goal must be given and the first session is an init session with empty memory.
 */
export function registerAdoptCommand(program: Command): void {
  program
    .command('adopt')
    .description(
      "Take back a project Redis lost from its branch baton/<id>: --list shows the branches of a repository whose project Redis does not know and whether each has a memory snapshot; with a branch, the project is created again on that branch's code, its memory and goal restored from the snapshot (refs/baton/memory/<id>), and queued. Without a snapshot, give the goal again: its first session is an init session with empty memory.",
    )
    .argument('<repo>', 'the repository (path or URL) holding the branches')
    .argument('[branch]', 'the branch to adopt: baton/<project-id>')
    .option('--list', 'list the baton/<id> branches whose project Redis does not know')
    .option(
      '--goal <text>',
      'the goal (bullet lines "- ..." become features); default: the memory snapshot\'s',
      parseNonEmpty,
    )
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
      const given = await readGoal(options);
      const branches = await projectBranches(repo);
      const found = branches.find((candidate) => candidate.projectId === projectId);
      if (found === undefined) {
        throw new CliError('not_found', `${repo} has no branch baton/${projectId}.`);
      }
      const snapshot = await readSnapshot(repo, projectId, found.memorySnapshot);
      const missing = snapshot.found ? '' : snapshot.reason;
      const goal = given ?? (snapshot.found ? snapshot.snapshot.manifest.goal : undefined);
      if (goal === undefined) {
        throw new CliError(
          'usage',
          `give --goal or --goal-file: ${missing}, so the goal of ${projectId} is not known`,
        );
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
          base: options.base,
        });
        // Restoring and queuing either both happen or adopt leaves nothing behind: a project with
        // half its memory and no job would be refused by the next adopt ("exists in Redis").
        let step = 'restoring its memory';
        let restored: Awaited<ReturnType<typeof restoreMemory>> | null;
        let queued: Awaited<ReturnType<typeof control.enqueue>>;
        try {
          restored = snapshot.found
            ? await restoreMemory(await control.memoryStore(project.id), snapshot.snapshot)
            : null;
          step = 'queuing it';
          queued = await control.enqueue(project.id);
        } catch (error) {
          throw await undoAdopt(control, project.id, step, error);
        }
        if (options.json === true) {
          const memory = restored ?? { restored: false, reason: missing };
          process.stdout.write(
            `${outputJson({ ...projectJson(project), jobId: queued.jobId, memory }, 2)}\n`,
          );
          return;
        }
        const at = (project.lastCheckpoint ?? found.head).slice(0, 12);
        process.stdout.write(
          `adopted ${project.branch} of ${project.repo ?? repo} at ${at} as project ${project.id} (job ${queued.jobId}); follow it with: baton status ${project.id}\n`,
        );
        // The reason and the withheld paths come from the remote: text, never escape sequences.
        const said =
          restored === null
            ? `${missing}: its memory starts empty, so its first session is an init session on the branch's code\n`
            : `memory restored from snapshot ${restored.snapshot.slice(0, 12)} (session ${restored.sessionNumber}, ${restored.files} file${restored.files === 1 ? '' : 's'}${restored.withheld.length === 0 ? '' : `; withheld when it was saved: ${restored.withheld.join(', ')}`}), ${given === undefined ? 'goal from the snapshot' : 'goal as given'}; its first session resumes from it\n`;
        process.stdout.write(terminalText(said));
      });
    });
}

/**
 * Removes what a failed adopt created (the project record and any memory it wrote) and returns
 * the one-line error saying so; if the removal fails too, the error names what is left.
 */
async function undoAdopt(
  control: BatonControl,
  projectId: string,
  step: string,
  error: unknown,
): Promise<CliError> {
  const reason = oneLineReason(error);
  try {
    await control.deleteProject(projectId);
  } catch (cleanup) {
    return new CliError(
      'internal',
      `adopting baton/${projectId} failed while ${step}: ${reason}; removing the half-adopted project failed too (${oneLineReason(cleanup)}), so project ${projectId} is left in Redis with part of its memory and no job.`,
      { cause: error },
    );
  }
  return new CliError(
    'internal',
    `adopting baton/${projectId} failed while ${step}: ${reason}; nothing was adopted (the project and the memory written were removed), so the command can be re-run.`,
    { cause: error },
  );
}

function oneLineReason(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/gu, ' ').trim();
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
        branch.memorySnapshot === null
          ? `${branch.branch}  ${branch.head.slice(0, 12)}  no memory snapshot  baton adopt ${repo} ${branch.branch} --goal ...\n`
          : `${branch.branch}  ${branch.head.slice(0, 12)}  memory ${branch.memorySnapshot.slice(0, 12)}  baton adopt ${repo} ${branch.branch}\n`,
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

/** The snapshot of `projectId` on `repo`, or why there is none to restore. */
async function readSnapshot(repo: string, projectId: string, listed: string | null) {
  if (listed === null) {
    return { found: false as const, reason: `no memory snapshot (refs/baton/memory/${projectId})` };
  }
  const { readMemorySnapshot } = await import('@baton/workspace');
  return readMemorySnapshot({ repo, projectId });
}

/** Writes the snapshot's files into the new project's memory (Redis, through `MemoryStore`). */
async function restoreMemory(store: MemoryStore, snapshot: MemorySnapshot) {
  const { restoreMemoryFiles } = await import('@baton/workspace');
  try {
    const files = await restoreMemoryFiles(store, snapshot.files);
    return {
      restored: true,
      snapshot: snapshot.commit,
      sessionNumber: snapshot.manifest.sessionNumber,
      files,
      withheld: snapshot.manifest.withheld.map((file) => `${file.path} (${file.reason})`),
    };
  } finally {
    await store.close();
  }
}

/** `--goal` or `--goal-file` (at most one), or `undefined`: the snapshot's goal then. */
async function readGoal(options: AdoptOptions): Promise<string | undefined> {
  if (options.goal !== undefined && options.goalFile !== undefined) {
    throw new CliError('usage', 'give at most one of --goal and --goal-file');
  }
  if (options.goalFile === undefined) return options.goal;
  try {
    return await readFile(options.goalFile, 'utf8');
  } catch {
    throw new CliError('usage', `cannot read --goal-file ${options.goalFile}`);
  }
}
