import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Option, type Command } from 'commander';
import {
  CONTEXT_PRESET_NAMES,
  PROJECT_BUDGET_RULES,
  VERIFICATION_SECONDS_RULE,
  type ProjectContextPreset,
} from '@baton/projects/schema';
import { CliError } from '../errors.js';
import { verificationInput } from '../internal/verification.js';
import {
  ALLOW_HOST_HELP,
  CHECK_HELP,
  CHECK_TIMEOUT_HELP,
  REGRESSION_BUDGET_HELP,
  REQUIRE_CHECKS_HELP,
  MCP_CONFIG_HELP,
  readJsonFile,
  collectAllowedHost,
  parseBudget,
  parseModelId,
  parseNonEmpty,
  parseProjectId,
} from '../internal/argument-parsers.js';
import { toCommandFailure, withControl } from '../internal/remote-control.js';
import { projectJson } from './status.js';
import { outputJson } from '../internal/terminal-text.js';
import type { NewProjectFlags } from '../internal/new-project-flags.js';

/** Parsed options of `baton enqueue`: a new project's flags and the ones only a worker's project has. */
interface EnqueueOptions extends NewProjectFlags {
  project: string;
  model?: string;
  fallbackModel?: string;
  maxSessions?: number;
  maxTokens?: number;
  preset?: ProjectContextPreset;
}

/** `baton enqueue`: store a project in Redis and queue its first session for the workers. */
export function registerEnqueueCommand(program: Command): void {
  program
    .command('enqueue')
    .description(
      'Create a project in Redis and queue its first session for `baton worker` processes.',
    )
    .requiredOption('--project <id>', 'project id (letters, digits, "-", "_")', parseProjectId)
    .option('--goal <text>', 'the goal (bullet lines "- ..." become features)', parseNonEmpty)
    .option('--goal-file <file>', 'read the goal from a file')
    .option(
      '--repo <path-or-url>',
      'the repository to work on (read only at creation; the work goes to its branch baton/<id>, never your checkout)',
      parseNonEmpty,
    )
    .option(
      '--base <branch>',
      "the branch the work starts from (default: the repository's current or default branch)",
      parseNonEmpty,
    )
    .option('--skip-hooks', "commit checkpoints without running the repository's commit hooks")
    .option(
      '--workspace <dir>',
      "the working tree on every worker machine (default each worker's BATON_HOME/workspaces/<id>)",
    )
    .option(
      '--adopt',
      'let the project take a --workspace that already holds files: they become its first checkpoint (secrets, files over the size limit and ignored files stay, uncommitted; nothing is deleted). Without it such a directory is refused, with a preview of what adopting it would do',
    )
    .option('--model <model>', "model id (default: the worker's BATON_MODEL)", parseModelId)
    .option(
      '--fallback-model <model>',
      "model a session continues on when its model stays overloaded after the retries (default: the worker's BATON_FALLBACK_MODEL)",
      parseModelId,
    )
    .option(
      '--budget-usd <usd>',
      'pause the project once it has spent this much',
      parseBudget(PROJECT_BUDGET_RULES.maxUsd),
    )
    .option(
      '--max-sessions <n>',
      'pause the project after this many sessions',
      parseBudget(PROJECT_BUDGET_RULES.maxSessions),
    )
    .option(
      '--max-tokens <n>',
      'pause the project once its sessions have used this many input + output tokens',
      parseBudget(PROJECT_BUDGET_RULES.maxTokens),
    )
    .option(
      '--stall-after <n>',
      'pause the project (reason no_progress) after this many resume sessions in a row without a newly passing feature (default 3)',
      parseBudget(PROJECT_BUDGET_RULES.maxSessionsWithoutProgress),
    )
    .addOption(
      new Option('--preset <preset>', 'context-editing preset').choices([...CONTEXT_PRESET_NAMES]),
    )
    .option('--allow-host <host>', ALLOW_HOST_HELP, collectAllowedHost)
    .option('--check <command>', CHECK_HELP)
    .option('--require-checks', REQUIRE_CHECKS_HELP)
    .option('--check-timeout <seconds>', CHECK_TIMEOUT_HELP, parseBudget(VERIFICATION_SECONDS_RULE))
    .option(
      '--regression-budget <seconds>',
      REGRESSION_BUDGET_HELP,
      parseBudget(VERIFICATION_SECONDS_RULE),
    )
    .option('--mcp-config <file>', MCP_CONFIG_HELP)
    .option('--json', 'print JSON')
    .action(async (options: EnqueueOptions) => {
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
      const budgets: Record<string, number> = {};
      if (options.budgetUsd !== undefined) budgets.maxUsd = options.budgetUsd;
      if (options.maxSessions !== undefined) budgets.maxSessions = options.maxSessions;
      if (options.maxTokens !== undefined) budgets.maxTokens = options.maxTokens;
      if (options.stallAfter !== undefined) {
        budgets.maxSessionsWithoutProgress = options.stallAfter;
      }
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
          ...(options.workspace !== undefined
            ? { workspace: path.resolve(options.workspace) }
            : {}),
          ...(options.repo !== undefined ? { repo: options.repo } : {}),
          ...(options.base !== undefined ? { base: options.base } : {}),
          ...(options.skipHooks === true ? { skipHooks: true } : {}),
          ...(options.adopt === true ? { adoptWorkspace: true } : {}),
          ...(options.model !== undefined ? { model: options.model } : {}),
          ...(options.fallbackModel !== undefined ? { fallbackModel: options.fallbackModel } : {}),
          ...(options.preset !== undefined ? { contextPreset: options.preset } : {}),
          ...(Object.keys(budgets).length > 0 ? { budgets } : {}),
          ...(options.allowHost === undefined
            ? {}
            : { sandbox: { allowedHosts: options.allowHost } }),
          ...verificationInput(options),
          ...(mcp === undefined ? {} : { mcp }),
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
