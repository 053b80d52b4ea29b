import {
  CONTEXT_PRESET_NAMES,
  DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS,
  PROJECT_BUDGET_RULES,
  SESSION_BUDGET_RULES,
  VERIFICATION_SECONDS_RULE,
} from '@baton/projects/schema';
import { Option, type Command } from 'commander';
import {
  ALLOW_HOST_HELP,
  CHECK_HELP,
  CHECK_TIMEOUT_HELP,
  REGRESSION_BUDGET_HELP,
  REQUIRE_CHECKS_HELP,
  MCP_CONFIG_HELP,
  collectAllowedHost,
  parseBudget,
  parseModelId,
  parseNonEmpty,
  parsePositiveInteger,
  parseProjectId,
} from '../internal/argument-parsers.js';
import type { RunOptions } from '../internal/run-project.js';
import { COST_HELP } from '../internal/cost-help.js';
import { warnUnknownVariables } from '../internal/environment.js';

const DEFAULT_SESSIONS = 10;

/** `baton run`: init then resume sessions in-process until every feature passes. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description(
      'Run sessions of a project in this process (filesystem memory under BATON_HOME, no Redis) until every feature passes.',
    )
    .option(
      '--goal <text>',
      'the project goal (bullet lines "- ..." become features)',
      parseNonEmpty,
    )
    .option('--goal-file <file>', 'read the goal from a file')
    .option(
      '--repo <path-or-url>',
      'work on this repository: Baton clones it and pushes its work to branch baton/<id> (your checkout is never touched)',
      parseNonEmpty,
    )
    .option(
      '--base <branch>',
      "the branch the work starts from (default: the repository's current branch, or a URL's default branch)",
      parseNonEmpty,
    )
    .option('--skip-hooks', "commit checkpoints without running the repository's commit hooks")
    .option(
      '--workspace <dir>',
      "where Baton's clone lives (default: BATON_HOME/projects/<id>/workspace); without --repo the project starts from this directory's files",
    )
    .option(
      '--adopt',
      'let a new project take a --workspace that already holds files: they become its first checkpoint (secrets, files over the size limit and ignored files stay, uncommitted; nothing is deleted). Without it such a directory is refused, with a preview of what adopting it would do',
    )
    .option(
      '--sessions <n>',
      'most sessions to run now, init included',
      parsePositiveInteger(1_000),
      DEFAULT_SESSIONS,
    )
    .option(
      '--project <id>',
      'project id; an existing project continues from its memory',
      parseProjectId,
    )
    .option(
      '--model <model>',
      'model id (default BATON_MODEL, else claude-sonnet-4-6; "sim" = the simulator; BATON_FALLBACK_MODEL names a model to continue on when it stays overloaded)',
      parseModelId,
    )
    .addOption(
      new Option(
        '--preset <preset>',
        'context-editing preset, over baton.config.json and BATON_CONTEXT_* (default coding)',
      ).choices([...CONTEXT_PRESET_NAMES]),
    )
    .option(
      '--budget-usd <usd>',
      'stop when this run has spent this much',
      parseBudget(PROJECT_BUDGET_RULES.maxUsd),
    )
    .option(
      '--max-turns <n>',
      'most model turns per session',
      parseBudget(SESSION_BUDGET_RULES.maxTurns),
    )
    .option(
      '--stall-after <n>',
      `pause with reason no_progress after this many resume sessions in a row without a newly passing feature (default ${DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS}; kept for the project)`,
      parseBudget(PROJECT_BUDGET_RULES.maxSessionsWithoutProgress),
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
    .option('--json', 'print events as JSON lines on stdout (messages go to stderr)')
    .option(
      '--no-sandbox',
      "run the agent's commands unsandboxed (explicit opt-out, same as BATON_SANDBOX=off; said at start and in every session's events)",
    )
    .addHelpText('after', COST_HELP)
    .action(async (options: RunOptions) => {
      await warnUnknownVariables('run');
      // Loaded on use, so `--help` and argument errors stay fast.
      const { runProject } = await import('../internal/run-project.js');
      process.exitCode = await runProject(options);
    });
}
