import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { CliError } from '../errors.js';
import { verificationInput } from '../internal/verification.js';
import { parseProjectId, readJsonFile } from '../internal/argument-parsers.js';
import { toCommandFailure, withControl } from '../internal/remote-control.js';
import { projectJson } from './status.js';
import { outputJson } from '../internal/terminal-text.js';
import {
  PROJECT_OPTIONS_HELP,
  addProjectOptions,
  budgetsFromFlags,
  type ProjectFlags,
} from '../internal/project-options.js';

/** Parsed options of `baton enqueue`: the project options and the ones only a worker's project has. */
interface EnqueueOptions extends ProjectFlags {
  project: string;
  /** `--no-sandbox` is refused: the sandbox is the worker's setting. */
  sandbox?: boolean | undefined;
}

/** Why `baton enqueue --no-sandbox` is refused (docs/cli.md). */
const NO_SANDBOX_IS_THE_WORKERS =
  '--no-sandbox is a setting of the worker, not of a project: a queued project cannot turn off the sandbox of the machines that run it. Start `baton worker --no-sandbox` (or set BATON_SANDBOX=off) where commands may run unsandboxed';

/** `baton enqueue`: store a project in Redis and queue its first session for the workers. */
export function registerEnqueueCommand(program: Command): void {
  const command = program
    .command('enqueue')
    .description(
      'Create a project in Redis and queue its first session for `baton worker` processes.',
    )
    .requiredOption('--project <id>', 'project id (letters, digits, "-", "_")', parseProjectId);
  addProjectOptions(command)
    .option('--json', 'print JSON')
    .addOption(new Option('--no-sandbox').hideHelp())
    .addHelpText('after', PROJECT_OPTIONS_HELP)
    .action(async (options: EnqueueOptions) => {
      if (options.sandbox === false) throw new CliError('usage', NO_SANDBOX_IS_THE_WORKERS);
      if ((options.goal === undefined) === (options.goalFile === undefined)) {
        throw new CliError('usage', 'give exactly one of --goal and --goal-file');
      }
      if (options.base !== undefined && options.repo === undefined) {
        throw new CliError('usage', '--base needs --repo.');
      }
      let goal = options.goal ?? '';
      if (options.goalFile !== undefined) {
        try {
          goal = await readFile(options.goalFile, 'utf8');
        } catch {
          throw new CliError('usage', `cannot read --goal-file ${options.goalFile}`);
        }
      }
      const budgets = budgetsFromFlags(options);
      // Loaded on use, so `--help` stays fast.
      const { checkNewWorkspace } = await import('../internal/workspace-adoption.js');
      if (options.workspace !== undefined) {
        // The roots the control API applies (BATON_WORKSPACE_ROOT), first: a directory outside
        // them is refused before the adoption preview reads it.
        const { sourcePolicyFromEnvironment } = await import('@baton/projects');
        await sourcePolicyFromEnvironment(process.env, { served: false, home: '' })
          .check({ workspace: path.resolve(options.workspace) }, process.cwd())
          .catch((error: unknown) => {
            throw toCommandFailure(error);
          });
      }
      await checkNewWorkspace(options.workspace, {
        adopt: options.adopt === true,
        out: options.json === true ? process.stderr : process.stdout,
      });
      const mcp =
        options.mcpConfig === undefined ? undefined : await readJsonFile(options.mcpConfig);
      await withControl(async (control) => {
        const project = await control.createProject({
          id: options.project,
          goal,
          workspace: options.workspace === undefined ? undefined : path.resolve(options.workspace),
          repo: options.repo,
          base: options.base,
          ...(options.skipHooks === true ? { skipHooks: true } : {}),
          ...(options.adopt === true ? { adoptWorkspace: true } : {}),
          model: options.model,
          fallbackModel: options.fallbackModel,
          contextPreset: options.preset,
          budgets,
          sandbox:
            options.allowHost === undefined ? undefined : { allowedHosts: options.allowHost },
          verification: verificationInput(options),
          mcp,
        });
        const queued = await control.enqueue(project.id);
        if (options.json) {
          process.stdout.write(
            `${outputJson({ ...projectJson(project), jobId: queued.jobId }, 2)}\n`,
          );
        } else {
          process.stdout.write(
            `queued project ${project.id} (job ${queued.jobId})${project.repo === null ? '' : ` on ${project.branch} of ${project.repo} from ${project.base} (${(project.baseCommit ?? '').slice(0, 12)})`}; follow it with: baton status ${project.id}\n`,
          );
        }
      });
    });
}
