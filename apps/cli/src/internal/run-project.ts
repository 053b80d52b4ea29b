import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  ContextConfigError,
  loadContextConfig,
  summarizeContextConfig,
  type ContextPresetName,
  type ResolvedContextConfig,
} from '@baton/context-config';
import { createFileSystemStore, memoryStoreLimits } from '@baton/core';
import {
  PROJECT_TRANSITIONS,
  SessionControl,
  createFileGuidance,
  createSessionChain,
  formatIssues,
  openFileProjectLog,
  projectVerificationSchema,
  type ChainCause,
  type ChainDecision,
  type FileProjectLog,
  type ProjectBudgets,
  type ProjectRecord,
  type ProjectVerification,
} from '@baton/projects';
import {
  MCP_CONFIG_ENV_VARIABLE,
  type McpConfig,
  SessionError,
  createFileTranscriptStore,
  describeMcpServer,
  loadMcpConfigFile,
  mergeMcpConfigs,
  readFeatures,
  runSession,
  startOtlpTracing,
} from '@baton/session';
import {
  type ProjectSandbox,
  type SandboxSetting,
  WorkspaceError,
  decideSandbox,
  describeSandboxDecision,
  parseProjectSandbox,
  parseSandboxSetting,
  sessionSandboxSetup,
  projectBranch,
  resolveProjectSource,
  type ProjectSource,
} from '@baton/workspace';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { abortableDelay } from './abortable-delay.js';
import { featureBar, formatUsd } from './format.js';
import { createLiveView, shouldUseColor } from './live-view.js';
import { connectModel, refuseModelWithoutKey } from './model.js';
import { batonHome, deriveProjectId } from './project-home.js';
import { CLI_ENV_VARIABLES } from './environment.js';
import { outputJson } from './terminal-text.js';
import { describeVerification, verificationInput } from './verification.js';
import { checkNewWorkspace } from './workspace-adoption.js';

/** Parsed options of `baton run`. */
export interface RunOptions {
  goal?: string;
  goalFile?: string;
  workspace?: string;
  repo?: string;
  base?: string;
  skipHooks?: boolean;
  sessions: number;
  project?: string;
  model?: string;
  /** Over `baton.config.json` and `BATON_CONTEXT_*`; unset: those decide (default `coding`). */
  preset?: ContextPresetName;
  budgetUsd?: number;
  maxTurns?: number;
  stallAfter?: number;
  json?: boolean;
  /** `--no-sandbox` sets it to false: the operator's explicit opt-out. */
  sandbox?: boolean;
  /** `--allow-host` (repeatable): hosts the project's commands reach through the proxy. */
  allowHost?: string[];
  /** `--check`: the check of features that have none. */
  check?: string;
  /** `--require-checks`: refuse flips of features with no check. */
  requireChecks?: boolean;
  /** `--check-timeout`: seconds one check may run. */
  checkTimeout?: number;
  /** `--regression-budget`: seconds of end-of-session re-runs. */
  regressionBudget?: number;
  /** `--adopt`: a `--workspace` already holding files becomes the first checkpoint. */
  adopt?: boolean;
  /** `--mcp-config FILE`: the project's MCP servers (`.mcp.json` format), kept with the project. */
  mcpConfig?: string;
}

/** An MCP configuration file (`--mcp-config`, `BATON_MCP_CONFIG`) as a one-line usage error. */
function readMcpConfig(file: string | undefined, what: string): McpConfig | undefined {
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
}

/** `--check`/`--require-checks` through the project schema `enqueue` and the dashboard use. */
function readProjectVerification(options: RunOptions): ProjectVerification | undefined {
  const input = verificationInput(options).verification;
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
async function openProject(options: RunOptions, log: FileProjectLog): Promise<ProjectRecord> {
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
  const mcp = readMcpConfig(options.mcpConfig, `--mcp-config ${options.mcpConfig ?? ''}`);
  const source = await resolveSource(options, id);
  return log.create({
    id,
    goal,
    // The working tree stays where `baton run` always put it: beside the project's memory.
    workspace:
      options.workspace !== undefined ? path.resolve(options.workspace) : log.paths(id).workspace,
    adoptWorkspace: options.adopt === true,
    model: null,
    fallbackModel: null,
    budgets: {},
    contextPreset: 'coding',
    context: {},
    sandbox: readProjectSandbox(options) ?? null,
    verification: readProjectVerification(options) ?? null,
    ...(mcp === undefined ? {} : { mcp }),
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
function readSandboxSetting(options: RunOptions): SandboxSetting {
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
 * The sessions' context config: `baton.config.json` in the directory baton runs in, then
 * `BATON_CONTEXT_*`, then `--preset`; a bad one is a usage error listing every problem.
 */
async function readContextConfig(options: RunOptions): Promise<ResolvedContextConfig> {
  try {
    return await loadContextConfig({
      cwd: process.cwd(),
      ...(options.preset === undefined ? {} : { override: { preset: options.preset } }),
    });
  } catch (error) {
    if (!(error instanceof ContextConfigError)) throw error;
    throw new CliError(
      'usage',
      `invalid context config: ${error.issues.map((issue) => `${issue.source === 'override' ? '--preset' : issue.source}: ${issue.path}: ${issue.message}`).join('; ')}.`,
    );
  }
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
function checkpointIntervalMs(): number | undefined {
  return integerVariable(CLI_ENV_VARIABLES.checkpointIntervalMs, 0);
}

/** `BATON_MAX_FILE_BYTES`: files larger are left out of checkpoints (default 50 MiB). */
function maxFileBytes(): number | undefined {
  return integerVariable(CLI_ENV_VARIABLES.maxFileBytes, 1);
}

/**
 * `baton run`'s exit code for what the chain decided last, one row per rule of
 * `decideAfterSession` (`next` rows: the `--sessions` limit was reached first).
 */
const EXIT_CODE_BY_CAUSE: Record<ChainCause, number> = {
  completed: EXIT_CODES.ok,
  budget: EXIT_CODES.budgetExhausted,
  no_progress: EXIT_CODES.noProgress,
  // The key was refused: no session can run until the user fixes it.
  auth: EXIT_CODES.sessionFailed,
  // The API does not know the model: no session can run until the user names another.
  model_not_found: EXIT_CODES.sessionFailed,
  context_full: EXIT_CODES.noProgress,
  failed: EXIT_CODES.sessionFailed,
  refused: EXIT_CODES.refused,
  cancelled: EXIT_CODES.cancelled,
  // The remote could not take the work: nothing is lost, the next run pushes it first.
  workspace: EXIT_CODES.featuresRemaining,
  operator_pause: EXIT_CODES.featuresRemaining,
  not_runnable: EXIT_CODES.featuresRemaining,
  lease_lost: EXIT_CODES.sessionFailed,
  chain: EXIT_CODES.featuresRemaining,
  retry: EXIT_CODES.featuresRemaining,
  shutdown: EXIT_CODES.featuresRemaining,
};

/** `baton run`'s chain rules: the worker's defaults, without its queue delays. */
const LOCAL_CHAIN_POLICY = {
  chainDelayMs: 0,
  /** Backs off like the worker (doubling with each failure in a row), from one second. */
  retryDelayMs: 1000,
  maxConsecutiveFailures: 3,
} as const;

/** Run sessions of one project until the chain stops it; returns the exit code. */
export async function runProject(options: RunOptions): Promise<number> {
  const home = batonHome();
  // Read before anything starts, so a bad value stops the run with nothing to clean up.
  const sandboxSetting = readSandboxSetting(options);
  const workerMcp = readMcpConfig(process.env[MCP_CONFIG_ENV_VARIABLE], MCP_CONFIG_ENV_VARIABLE);
  const intervalMs = checkpointIntervalMs();
  const fileLimit = maxFileBytes();
  const context = await readContextConfig(options);
  refuseModelWithoutKey(options.model === undefined ? {} : { model: options.model });
  const json = options.json === true;
  const log = await openFileProjectLog({
    home,
    // Every event the project's log gets, as `baton logs --local --json` shows it later.
    onAppend: json ? (event) => process.stdout.write(`${outputJson(event)}\n`) : undefined,
  });
  let project = await openProject(options, log);
  const paths = log.paths(project.id);
  // The store enforces the memory quotas atomically, so the handler skips its own usage() check.
  const store = await createFileSystemStore({
    root: paths.memories,
    limits: memoryStoreLimits(),
  });
  const transcripts = createFileTranscriptStore({ dir: paths.transcripts });
  // `baton say --local` adds to it from another process while the session runs.
  const guidance = createFileGuidance(paths);
  const output = createLiveView({
    write: (text) => process.stdout.write(text),
    color: !json && shouldUseColor(process.stdout),
    statusLine: !json && process.stdout.isTTY === true,
    timestamps: false,
    columns: process.stdout.columns,
  });
  const say = (text: string) => (json ? process.stderr.write(`${text}\n`) : output.line(text));
  const connection = await connectModel(
    options.model === undefined ? {} : { model: options.model },
  );
  say(connection.notice);
  const traces = await startTraces(connection);
  if (traces !== undefined) say(`Traces: OTLP to ${traces.url}.`);
  const fallbackModel = connection.fallbackModel;
  if (fallbackModel !== undefined && fallbackModel === connection.model) {
    await connection.sim?.close();
    throw new CliError(
      'usage',
      `BATON_FALLBACK_MODEL is the model itself (${fallbackModel}): name another model, or unset it.`,
    );
  }
  if (fallbackModel !== undefined) {
    say(`Fallback model: ${fallbackModel} (when ${connection.model} stays overloaded).`);
  }
  const sandbox = decideSandbox(sandboxSetting, { simulator: connection.sim !== undefined });
  if (sandbox.kind === 'refused') {
    await connection.sim?.close();
    throw new CliError('internal', sandbox.message);
  }
  // Always on stderr as well: an unsandboxed run must be visible even with --json on stdout.
  if (sandbox.kind === 'unsandboxed') process.stderr.write(`baton run: ${sandbox.notice}\n`);
  else say(`Commands: ${describeSandboxDecision(sandbox)}.`);
  say(`Context: ${summarizeContextConfig(context)}.`);
  const sandboxSetup = sessionSandboxSetup(sandbox, project.sandbox);
  const allowedHosts = project.sandbox?.allowedHosts ?? [];
  if (sandbox.kind === 'sandboxed' && allowedHosts.length > 0) {
    say(`Allowed hosts: ${allowedHosts.join(', ')} (through the sandbox proxy).`);
  }
  const mcpServers = mergeMcpConfigs([
    { source: 'worker', config: workerMcp },
    { source: 'project', config: project.mcp },
  ]);
  if (mcpServers.length > 0) {
    say(
      `MCP servers: ${mcpServers.map(describeMcpServer).join(', ')}; and the workspace's .mcp.json.`,
    );
  }

  const control = new SessionControl(undefined);
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts === 1) {
      say(
        'Ctrl-C: ending the session cleanly (end-of-session turn). Press Ctrl-C again to quit at once.',
      );
      // What `baton cancel` does to a worker's project: the status says so, a later run resumes.
      void log
        .transition(project.id, PROJECT_TRANSITIONS.cancel.to, {
          from: PROJECT_TRANSITIONS.cancel.from,
          reason: 'cancelled by user (Ctrl-C)',
        })
        .catch(() => undefined);
      control.abort('cancelled');
    } else {
      process.exit(EXIT_CODES.cancelled);
    }
  };
  process.on('SIGINT', onSigint);
  const continueHint = `Continue with: baton run --project ${project.id}${process.env.BATON_HOME ? ` (BATON_HOME=${process.env.BATON_HOME})` : ''}`;

  // Continuing a project is a user's resume: a stopped one is queued again and the failure and
  // no-progress streaks start again.
  if (options.stallAfter !== undefined) {
    await log.setBudgets(project.id, {
      ...project.budgets,
      maxSessionsWithoutProgress: options.stallAfter,
    });
  }
  if (
    project.status === 'paused' ||
    project.status === 'cancelled' ||
    project.status === 'failed'
  ) {
    await log.transition(project.id, PROJECT_TRANSITIONS.resume.to, {
      from: PROJECT_TRANSITIONS.resume.from,
      reason: 'resumed',
    });
  }
  await log.resetFailures(project.id);
  project = await log.require(project.id);

  const chain = createSessionChain({
    log,
    runSession,
    client: connection.client,
    workerId: 'local',
    home,
    ...LOCAL_CHAIN_POLICY,
    defaultModel: connection.model,
    defaultFallbackModel: fallbackModel,
    checkpointIntervalMs: intervalMs,
    maxFileBytes: fileLimit,
    observeSessionEvent: (event) => {
      traces?.tracing.record(event);
      // A session's own events are decoded events as they are (what `baton logs` reads back).
      if (!json) output.onEvent(event);
    },
  });
  // `--budget-usd` is a budget of this run, laid over the project's own and never stored.
  const costAtStart = project.counters.costUsd;
  const budgets = (current: ProjectRecord): ProjectBudgets => ({
    ...current.budgets,
    maxUsd:
      options.budgetUsd === undefined ? current.budgets.maxUsd : costAtStart + options.budgetUsd,
    session:
      options.maxTurns === undefined
        ? current.budgets.session
        : { ...current.budgets.session, maxTurns: options.maxTurns },
  });

  let decision: ChainDecision | undefined;
  /** Checkpoints of this run's sessions that could not be committed (retried, or the pause). */
  let checkpointFailures = 0;
  try {
    say(
      `Project ${project.id} · ${project.repo ? `repo ${project.repo} · base ${project.base} · ` : ''}branch ${projectBranch(project.id)} · workspace ${project.workspace} · memory ${paths.memories}`,
    );
    for (let index = 0; index < options.sessions && !control.signal.aborted; index += 1) {
      const current = await log.require(project.id);
      const outcome = await chain.runOne({
        projectId: project.id,
        sessionNumber: current.counters.sessions + 1,
        jobId: `local-${current.counters.sessions + 1}`,
        control,
        memory: () => store,
        sessionOptions: () => ({
          context,
          tools: { sandbox: sandboxSetup },
          mcp: { worker: workerMcp },
          transcript: transcripts,
          guidance,
        }),
        budgets,
      });
      if (!outcome.ran) break;
      decision = outcome.decision;
      checkpointFailures += outcome.result.checkpointFailures ?? 0;
      if (outcome.result.stopReason === 'workspace_unavailable') say(outcome.result.reason);
      if (decision.kind !== 'next') break;
      if (decision.cause === 'retry') say(`Retrying: ${decision.reason}.`);
      if (decision.delayMs > 0) await abortableDelay(decision.delayMs, control.signal);
    }
    project = await log.require(project.id);
    const exitCode = control.signal.aborted
      ? EXIT_CODES.cancelled
      : project.status === 'completed'
        ? EXIT_CODES.ok
        : decision === undefined
          ? EXIT_CODES.featuresRemaining
          : EXIT_CODE_BY_CAUSE[decision.cause];
    if (decision?.kind === 'finish' && decision.status !== 'completed') {
      say(`${decision.status === 'paused' ? 'Paused' : 'Failed'}: ${decision.reason}.`);
    }
    const finalFeatures = await readFeatures(store);
    const counts = {
      passing: finalFeatures?.filter((feature) => feature.passes).length ?? 0,
      total: finalFeatures?.length ?? 0,
    };
    const runUsd = project.counters.costUsd - costAtStart;
    const summary = {
      type: 'run-end',
      projectId: project.id,
      exitCode,
      features: counts,
      sessions: project.counters.sessionsStarted,
      costUsd: Number(runUsd.toFixed(6)),
      branch: projectBranch(project.id),
      lastCheckpoint: project.lastCheckpoint,
      checkpointFailures,
    };
    const failed =
      checkpointFailures === 0
        ? ''
        : ` · ${checkpointFailures} checkpoint${checkpointFailures === 1 ? '' : 's'} failed`;
    if (json) process.stdout.write(`${outputJson(summary)}\n`);
    else
      say(
        `Features ${featureBar(counts)} · ${formatUsd(runUsd)} this run${failed} · exit ${exitCode}`,
      );
    if (exitCode !== EXIT_CODES.ok)
      say(exitCode === EXIT_CODES.cancelled ? `Stopped. ${continueHint}` : continueHint);
    return exitCode;
  } finally {
    output.close();
    process.off('SIGINT', onSigint);
    control.dispose();
    await store.close();
    await connection.sim?.close();
    // Spans are batched: the run's last ones are sent before the process exits.
    await traces?.shutdown().catch(() => undefined);
  }
}

/** OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (a bad one is a usage error). */
async function startTraces(connection: { sim: { close(): Promise<void> } | undefined }) {
  try {
    return await startOtlpTracing({ serviceName: 'baton' });
  } catch (error) {
    if (!(error instanceof SessionError)) throw error;
    await connection.sim?.close();
    throw new CliError('usage', `${error.message}.`);
  }
}
