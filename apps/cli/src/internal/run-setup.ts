/**
 * What `baton run` reads before its first session: its options, the project it continues or
 * creates (refusing flags that differ from a stored project's), and its settings from the
 * environment. Every problem is one usage line, before anything is created or started.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { contextVariablesSet, type ContextConfigInput } from '@baton/context-config';

import {
  formatIssues,
  isProjectError,
  projectContext,
  projectVerificationSchema,
  withContextPreset,
  type FileProjectLog,
  type ProjectRecord,
  type ProjectSettings,
  type ProjectVerification,
} from '@baton/projects';
import { type McpConfig, SessionError, loadMcpConfigFile } from '@baton/session';
import {
  type ProjectSandbox,
  type SandboxSetting,
  WorkspaceError,
  parseProjectSandbox,
  parseSandboxSetting,
  projectBranch,
  resolveProjectSource,
  type ProjectSource,
} from '@baton/workspace';
import { CliError } from '../errors.js';

import { deriveProjectId } from './project-home.js';
import { CLI_ENV_VARIABLES } from './environment.js';

import { describeVerification, verificationInput } from './verification.js';
import { checkNewWorkspace } from './workspace-adoption.js';
import { budgetsFromFlags, type ProjectFlags } from './project-options.js';

/** Parsed options of `baton run`: the project options and the run's own. */
export interface RunOptions extends ProjectFlags {
  /** `--sessions`: most sessions this process runs (not kept for the project). */
  sessions: number;
  project?: string | undefined;
  /** `--no-sandbox` sets it to false: the operator's explicit opt-out. */
  sandbox?: boolean | undefined;
}

/** An MCP configuration file (`--mcp-config`, `BATON_MCP_CONFIG`) as a one-line usage error. */
export function readMcpConfig(file: string | undefined, what: string): McpConfig | undefined {
  if (file === undefined || file.trim() === '') return undefined;
  try {
    return loadMcpConfigFile(file, what);
  } catch (error) {
    if (error instanceof SessionError) throw new CliError('usage', error.message);
    throw error;
  }
}

async function readGoal(options: RunOptions): Promise<string | undefined> {
  if (options.goal !== undefined && options.goalFile !== undefined) {
    throw new CliError('usage', 'use either --goal or --goal-file, not both.');
  }
  if (options.goalFile !== undefined) {
    const text = await readFile(options.goalFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new CliError(
        'usage',
        `cannot read --goal-file ${options.goalFile}: ${error.code === 'ENOENT' ? 'no such file' : (error.code ?? error.message)}.`,
      );
    });
    if (text.trim() === '')
      throw new CliError('usage', `--goal-file ${options.goalFile} is empty.`);
    return text;
  }
  return options.goal;
}

/** Refuses `--repo`/`--base`/`--skip-hooks`/`--workspace` that differ from an existing project's. */
function checkSameSource(existing: ProjectRecord, options: RunOptions): void {
  const differs = (what: string, current: string) => {
    throw new CliError('usage', `project ${existing.id} already uses ${what} ${current}.`);
  };
  if (options.workspace !== undefined && path.resolve(options.workspace) !== existing.workspace) {
    differs('the workspace', existing.workspace ?? '(default)');
  }
  if (options.repo !== undefined && options.repo !== (existing.repo ?? undefined)) {
    const current = existing.repo ?? 'no --repo';
    if (path.resolve(options.repo) !== current) differs('the repository', current);
  }
  if (options.base !== undefined && options.base !== existing.base) {
    differs('the base', existing.base ?? '(none)');
  }
  if (options.skipHooks === true && !existing.skipHooks) {
    throw new CliError(
      'usage',
      `project ${existing.id} runs hooks; --skip-hooks is set when a project is created.`,
    );
  }
  const verification = readProjectVerification(options);
  if (
    verification !== undefined &&
    JSON.stringify(verification) !== JSON.stringify(existing.verification ?? {})
  ) {
    throw new CliError(
      'usage',
      `project ${existing.id} ${describeVerification(existing.verification)}; --check, --require-checks, --check-timeout and --regression-budget are set when a project is created.`,
    );
  }
  const hosts = existing.sandbox?.allowedHosts ?? [];
  const asked = readProjectSandbox(options)?.allowedHosts;
  if (asked !== undefined && asked.join(' ') !== hosts.join(' ')) {
    throw new CliError(
      'usage',
      `project ${existing.id} allows ${hosts.length === 0 ? 'no hosts' : hosts.join(', ')}; --allow-host is set when a project is created.`,
    );
  }
  if (options.mcpConfig !== undefined) {
    throw new CliError(
      'usage',
      `project ${existing.id} already exists; --mcp-config is set when a project is created.`,
    );
  }
  if (
    options.fallbackModel !== undefined &&
    options.fallbackModel !== (existing.fallbackModel ?? undefined)
  ) {
    throw new CliError(
      'usage',
      `project ${existing.id} ${existing.fallbackModel === null ? 'has no fallback model' : `falls back to ${existing.fallbackModel}`}; --fallback-model is set when a project is created.`,
    );
  }
}

/** `--check`/`--require-checks` through the project schema `enqueue` and the dashboard use. */
function readProjectVerification(options: RunOptions): ProjectVerification | undefined {
  const input = verificationInput(options);
  if (input === undefined) return undefined;
  const parsed = projectVerificationSchema.safeParse(input);
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues).map((line) =>
      line.replace(/^check:/, '--check:'),
    );
    throw new CliError('usage', `${problems.join('; ')}.`);
  }
  return parsed.data;
}

/** `--allow-host` through the project schema `enqueue` and the dashboard use; one line when wrong. */
function readProjectSandbox(options: RunOptions): ProjectSandbox | undefined {
  if (options.allowHost === undefined) return undefined;
  try {
    return parseProjectSandbox({ allowedHosts: options.allowHost }, 'sandbox');
  } catch (error) {
    if (error instanceof WorkspaceError) throw new CliError('usage', error.message);
    throw error;
  }
}

/** `--repo`/`--base` resolved for a new project; one line and nothing created when they are wrong. */
async function resolveSource(options: RunOptions, id: string): Promise<ProjectSource | null> {
  if (options.repo === undefined) {
    if (options.base !== undefined) throw new CliError('usage', '--base needs --repo.');
    return null;
  }
  try {
    return await resolveProjectSource({ repo: options.repo, base: options.base, projectId: id });
  } catch (error) {
    if (error instanceof WorkspaceError) throw new CliError('usage', error.message);
    throw error;
  }
}

/** Find or create the project this run continues. */
export async function openProject(
  options: RunOptions,
  log: FileProjectLog,
): Promise<ProjectRecord> {
  const goal = await readGoal(options);
  if (options.project !== undefined) {
    const existing = await log.get(options.project);
    if (existing !== null) {
      if (goal !== undefined && goal.trim() !== existing.goal.trim()) {
        throw new CliError(
          'usage',
          `project ${existing.id} already has a goal; omit --goal/--goal-file to continue it.`,
        );
      }
      checkSameSource(existing, options);
      noteContextVariables(existing);
      return existing;
    }
    if (goal === undefined) {
      throw new CliError(
        'usage',
        `no project ${options.project} under ${log.home}; give --goal or --goal-file to start it.`,
      );
    }
  }
  if (goal === undefined)
    throw new CliError(
      'usage',
      'give --goal TEXT or --goal-file FILE (or --project ID to continue a project).',
    );
  const id =
    options.project ??
    deriveProjectId(
      options.goalFile !== undefined
        ? path.basename(options.goalFile).replace(/\.[^.]+$/, '')
        : (goal.split('\n')[0] ?? ''),
    );
  await checkNewWorkspace(options.workspace, {
    adopt: options.adopt === true,
    maxFileBytes: maxFileBytes(),
    // The live view is on stdout; with --json that is JSON lines only.
    out: options.json === true ? process.stderr : process.stdout,
  });
  const context = await newProjectContext(options);
  const mcp = readMcpConfig(options.mcpConfig, `--mcp-config ${options.mcpConfig ?? ''}`);
  const source = await resolveSource(options, id);
  return log.create({
    id,
    goal,
    // The working tree stays where `baton run` always put it: beside the project's memory.
    workspace:
      options.workspace !== undefined ? path.resolve(options.workspace) : log.paths(id).workspace,
    adoptWorkspace: options.adopt === true,
    model: options.model ?? null,
    fallbackModel: options.fallbackModel ?? null,
    budgets: budgetsFromFlags(options) ?? {},
    contextPreset: context.preset ?? 'coding',
    context,
    sandbox: readProjectSandbox(options) ?? null,
    verification: readProjectVerification(options) ?? null,
    mcp,
    createdAt: Date.now(),
    repo: source?.repo ?? null,
    base: source?.base ?? null,
    baseCommit: source?.baseCommit ?? null,
    branch: projectBranch(id),
    skipHooks: options.skipHooks === true,
    lastCheckpoint: source?.existingHead ?? null,
  });
}

/** `BATON_SANDBOX` and `--no-sandbox`, as a usage error when the variable is not valid. */
export function readSandboxSetting(options: RunOptions): SandboxSetting {
  try {
    return parseSandboxSetting(process.env[CLI_ENV_VARIABLES.sandbox], {
      noSandbox: options.sandbox === false,
    });
  } catch (error) {
    if (error instanceof WorkspaceError) throw new CliError('usage', `${error.message}.`);
    throw error;
  }
}

/**
 * The context config a new project stores, read as `baton enqueue` reads it (`projectContext`):
 * `baton.config.json` in the directory baton runs in, then `BATON_CONTEXT_*`, then `--preset`;
 * a bad one is a usage error listing every problem.
 */
async function newProjectContext(options: RunOptions): Promise<ContextConfigInput> {
  try {
    return await projectContext({ contextPreset: options.preset }, {});
  } catch (error) {
    if (isProjectError(error)) throw new CliError('usage', `${error.message}.`);
    throw error;
  }
}

/**
 * A continued project runs the context config stored when it was created, as on a worker:
 * `BATON_CONTEXT_*` set now change nothing, and one line on stderr says so.
 */
function noteContextVariables(project: ProjectRecord): void {
  const names = contextVariablesSet();
  if (names.length === 0) return;
  process.stderr.write(
    `baton run: ${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} not applied: project ${project.id} runs the context config stored when it was created (--preset replaces its preset)\n`,
  );
}

/**
 * The stored settings the project options given replace (`--model`, `--preset`, each budget),
 * checked before anything changes; a preset the stored config cannot take is a usage error.
 */
export function settingsFromFlags(project: ProjectRecord, options: RunOptions): ProjectSettings {
  let context: ContextConfigInput | undefined;
  if (options.preset !== undefined) {
    try {
      context = withContextPreset(project.context, options.preset);
    } catch (error) {
      if (isProjectError(error)) throw new CliError('usage', `${error.message}.`);
      throw error;
    }
  }
  return { budgets: budgetsFromFlags(options, project.budgets), model: options.model, context };
}

/** An integer variable of `baton run`, at least `min`; unset or empty: `undefined`. */
function integerVariable(
  name: string,
  min: number,
  env: NodeJS.ProcessEnv = process.env,
): number | undefined {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min) {
    throw new CliError('usage', `${name} must be an integer >= ${min}, got "${value}".`);
  }
  return parsed;
}

/** `BATON_CHECKPOINT_INTERVAL_MS`: least time between two checkpoints after turns. */
export function checkpointIntervalMs(): number | undefined {
  return integerVariable(CLI_ENV_VARIABLES.checkpointIntervalMs, 0);
}

/** `BATON_MEMORY_SNAPSHOTS`: `on` (default) or `off`: memory snapshots in git after checkpoints. */
export function memorySnapshots(): boolean {
  const value = (process.env[CLI_ENV_VARIABLES.memorySnapshots] ?? '').trim();
  if (value !== '' && value !== 'on' && value !== 'off') {
    throw new CliError(
      'usage',
      `${CLI_ENV_VARIABLES.memorySnapshots} must be on or off, got "${value.slice(0, 40)}".`,
    );
  }
  return value !== 'off';
}

/** `BATON_MAX_FILE_BYTES`: files larger are left out of checkpoints (default 50 MiB). */
export function maxFileBytes(): number | undefined {
  return integerVariable(CLI_ENV_VARIABLES.maxFileBytes, 1);
}
