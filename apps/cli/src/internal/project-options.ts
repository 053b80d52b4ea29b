/**
 * The project options: one table of flag, help text and parser that `baton run` and `baton
 * enqueue` both register, so the two verbs describe a project in the same words and store the
 * same settings (docs/decisions/2026-12-04-one-cli-vocabulary.md). Values are checked by the
 * rules of `@baton/projects` (the project schema's home); this file is only the CLI's names.
 */
import {
  CHAIN_POLICIES,
  CONTEXT_PRESET_NAMES,
  PROJECT_BUDGET_RULES,
  SESSION_BUDGET_RULES,
  VERIFICATION_SECONDS_RULE,
  DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS,
  type ProjectBudgets,
  type ProjectContextPreset,
} from '@baton/projects/schema';
import { Option, type Command } from 'commander';
import {
  collectAllowedHost,
  parseBudget,
  parseModelId,
  parseNonEmpty,
} from './argument-parsers.js';

/** One project option as commander registers it. */
interface ProjectOption {
  readonly flags: string;
  readonly help: string;
  /** Parses the value (`previous`: what the repeated option collected so far). */
  readonly parse?: ((value: string, previous: unknown) => unknown) | undefined;
  /** The only values allowed (commander names them in its error and in `--help`). */
  readonly choices?: readonly string[] | undefined;
}

/** Said after every setting the project keeps (a later run, resume or worker uses it). */
const KEPT = 'kept for the project';

/** Every project option, in the order both verbs list them. */
const PROJECT_OPTIONS: readonly ProjectOption[] = [
  {
    flags: '--goal <text>',
    help: 'the project goal (bullet lines "- ..." become features)',
    parse: parseNonEmpty,
  },
  { flags: '--goal-file <file>', help: 'read the goal from a file' },
  {
    flags: '--repo <path-or-url>',
    help: 'work on this repository: Baton clones it and pushes its work to branch baton/<id> (your checkout is never touched)',
    parse: parseNonEmpty,
  },
  {
    flags: '--base <branch>',
    help: "the branch the work starts from (default: the repository's current branch, or a URL's default branch)",
    parse: parseNonEmpty,
  },
  {
    flags: '--skip-hooks',
    help: "commit checkpoints without running the repository's commit hooks",
  },
  {
    flags: '--workspace <dir>',
    help: "the project's working tree (default: BATON_HOME/projects/<id>/workspace for `baton run`, each worker's BATON_HOME/workspaces/<id> for `baton enqueue`); without --repo the project starts from this directory's files",
  },
  {
    flags: '--adopt',
    help: 'let a new project take a --workspace that already holds files: they become its first checkpoint (secrets, files over the size limit and ignored files stay, uncommitted; nothing is deleted). Without it such a directory is refused, with a preview of what adopting it would do',
  },
  {
    flags: '--model <model>',
    help: `model id (default: BATON_MODEL where the session runs, else claude-sonnet-4-6; "sim" = the simulator; ${KEPT})`,
    parse: parseModelId,
  },
  {
    flags: '--fallback-model <model>',
    help: `model a session continues on when its model stays overloaded after the retries (default: BATON_FALLBACK_MODEL where the session runs; ${KEPT})`,
    parse: parseModelId,
  },
  {
    flags: '--preset <preset>',
    help: `context-editing preset, over baton.config.json and BATON_CONTEXT_* where the project is created (default coding; ${KEPT})`,
    choices: CONTEXT_PRESET_NAMES,
  },
  {
    flags: '--budget-usd <usd>',
    help: `pause the project once it has spent this much in all its sessions (${KEPT})`,
    parse: parseBudget(PROJECT_BUDGET_RULES.maxUsd),
  },
  {
    flags: '--max-sessions <n>',
    help: `pause the project after this many sessions, init included (${KEPT})`,
    parse: parseBudget(PROJECT_BUDGET_RULES.maxSessions),
  },
  {
    flags: '--max-tokens <n>',
    help: `pause the project once its sessions have used this many input + output tokens (${KEPT})`,
    parse: parseBudget(PROJECT_BUDGET_RULES.maxTokens),
  },
  {
    flags: '--max-turns <n>',
    help: `most model turns of each session (${KEPT})`,
    parse: parseBudget(SESSION_BUDGET_RULES.maxTurns),
  },
  {
    flags: '--stall-after <n>',
    help: `pause the project (reason no_progress) after this many resume sessions in a row without a newly passing feature (default ${DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS}; ${KEPT})`,
    parse: parseBudget(PROJECT_BUDGET_RULES.maxSessionsWithoutProgress),
  },
  {
    flags: '--allow-host <host>',
    help: `let the project's commands reach this host over HTTP(S) through the sandbox proxy (repeatable; *.example.com for subdomains; ${KEPT})`,
    parse: (value, previous) => collectAllowedHost(value, previous as string[] | undefined),
  },
  {
    flags: '--check <command>',
    help: `the check of features that have none: a shell command run in the sandbox, with the feature id in BATON_FEATURE_ID; exit 0 verifies a flip to passing (${KEPT})`,
  },
  {
    flags: '--require-checks',
    help: `refuse a flip to passing of a feature with no check, instead of accepting it as claimed (${KEPT})`,
  },
  {
    flags: '--check-timeout <seconds>',
    help: `seconds one check may run before it is killed and counts as failed (default 120; ${KEPT})`,
    parse: parseBudget(VERIFICATION_SECONDS_RULE),
  },
  {
    flags: '--regression-budget <seconds>',
    help: `seconds each session's end may spend re-running passing features' checks (default 60; all run before the project completes; ${KEPT})`,
    parse: parseBudget(VERIFICATION_SECONDS_RULE),
  },
  {
    flags: '--mcp-config <file>',
    help: `MCP servers for the project's sessions, in .mcp.json format (secrets as \${VAR} from the environment where the session runs; see docs/mcp.md; ${KEPT})`,
  },
];

/** The project options as commander parses them (`PROJECT_OPTIONS`). */
export interface ProjectFlags {
  goal?: string | undefined;
  goalFile?: string | undefined;
  repo?: string | undefined;
  base?: string | undefined;
  skipHooks?: boolean | undefined;
  workspace?: string | undefined;
  /** `--adopt`: a `--workspace` already holding files becomes the first checkpoint. */
  adopt?: boolean | undefined;
  model?: string | undefined;
  fallbackModel?: string | undefined;
  preset?: ProjectContextPreset | undefined;
  budgetUsd?: number | undefined;
  maxSessions?: number | undefined;
  maxTokens?: number | undefined;
  maxTurns?: number | undefined;
  stallAfter?: number | undefined;
  /** `--allow-host` (repeatable): hosts the project's commands reach through the proxy. */
  allowHost?: string[] | undefined;
  check?: string | undefined;
  requireChecks?: boolean | undefined;
  checkTimeout?: number | undefined;
  regressionBudget?: number | undefined;
  /** `--mcp-config FILE`: the project's MCP servers (`.mcp.json` format). */
  mcpConfig?: string | undefined;
  json?: boolean | undefined;
}

/** Registers every project option on `command`, in the table's order. */
export function addProjectOptions(command: Command): Command {
  for (const option of PROJECT_OPTIONS) {
    const { flags, help, parse, choices } = option;
    if (choices !== undefined) command.addOption(new Option(flags, help).choices(choices));
    else if (parse === undefined) command.option(flags, help);
    else command.option<unknown>(flags, help, parse);
  }
  return command;
}

/**
 * The project's budgets with the given flags laid over `stored`: each flag replaces its own
 * budget and leaves the others as they are. `undefined` when no budget flag is given.
 */
export function budgetsFromFlags(
  flags: ProjectFlags,
  stored: ProjectBudgets = {},
): ProjectBudgets | undefined {
  // The spreads stay: `given` is read with Object.keys and laid over `stored`, where an
  // undefined budget would wipe the stored one (ProjectBudgets stays strict).
  const given: ProjectBudgets = {
    // eslint-disable-next-line no-restricted-syntax -- read by Object.keys, merged over stored
    ...(flags.budgetUsd === undefined ? {} : { maxUsd: flags.budgetUsd }),
    // eslint-disable-next-line no-restricted-syntax -- read by Object.keys, merged over stored
    ...(flags.maxSessions === undefined ? {} : { maxSessions: flags.maxSessions }),
    // eslint-disable-next-line no-restricted-syntax -- read by Object.keys, merged over stored
    ...(flags.maxTokens === undefined ? {} : { maxTokens: flags.maxTokens }),
    // eslint-disable-next-line no-restricted-syntax -- read by Object.keys, merged over stored
    ...(flags.stallAfter === undefined ? {} : { maxSessionsWithoutProgress: flags.stallAfter }),
  };
  if (Object.keys(given).length === 0 && flags.maxTurns === undefined) return undefined;
  return {
    ...stored,
    ...given,
    // eslint-disable-next-line no-restricted-syntax -- `session: undefined` would wipe stored.session
    ...(flags.maxTurns === undefined
      ? {}
      : { session: { ...stored.session, maxTurns: flags.maxTurns } }),
  };
}

const seconds = (ms: number) => `${ms / 1_000} s`;
const { local, worker } = CHAIN_POLICIES;

/**
 * What the project options mean and how soon each entry point chains sessions; appended to the
 * `--help` of `run` and `enqueue` (and so to docs/cli.md), the table read from `CHAIN_POLICIES`.
 */
export const PROJECT_OPTIONS_HELP = [
  '',
  "Project options (the same words in `baton run` and `baton enqueue`) are the project's stored",
  'settings: a later run, a resume and every worker use them; given when `baton run` continues a',
  'project, --model, --preset and each budget replace the stored value. A session runs the',
  "project's model (--model), else BATON_MODEL where it runs, else claude-sonnet-4-6; the context",
  'config (baton.config.json and BATON_CONTEXT_* under --preset) is read when the project is',
  'created, and --preset on a continuing run replaces only its preset. --sessions, --json and',
  '--no-sandbox belong to the process: the sandbox is a setting of whoever runs the sessions',
  '(`baton worker --no-sandbox`), never of a queued project, so `baton enqueue --no-sandbox` is',
  'refused.',
  '',
  'Chain timings (CHAIN_POLICIES in @baton/projects; a retry waits twice as long each time):',
  '                             baton run   worker (variable)',
  `  next session after         ${seconds(local.chainDelayMs).padEnd(12)}${seconds(worker.chainDelayMs)} (BATON_CHAIN_DELAY_MS)`,
  `  first retry after failure  ${seconds(local.retryDelayMs).padEnd(12)}${seconds(worker.retryDelayMs)} (BATON_RETRY_DELAY_MS)`,
  `  failures in a row: failed  ${String(local.maxConsecutiveFailures).padEnd(12)}${worker.maxConsecutiveFailures} (BATON_MAX_FAILURES)`,
].join('\n');
