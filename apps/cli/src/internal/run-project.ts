import { appendFileSync } from 'node:fs';
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
  SessionError,
  allFeaturesPass,
  createFileTranscriptStore,
  readFeatures,
  runSession,
  startOtlpTracing,
  type SessionResult,
} from '@baton/session';
import {
  type ProjectSandbox,
  type SandboxSetting,
  WorkspaceError,
  checkWorkspaceDir,
  decideSandbox,
  describeSandboxDecision,
  openProjectWorkspace,
  parseProjectSandbox,
  parseSandboxSetting,
  sessionSandboxSetup,
  projectBranch,
  resolveProjectSource,
  type ProjectSource,
} from '@baton/workspace';
import {
  CHECKPOINT_FAILED_REASON,
  apiPauseReason,
  nextSessionKind,
  noProgressReason,
  sessionProgress,
} from '@baton/projects/schema';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { featureBar, formatUsd } from './format.js';
import { createLiveView, shouldUseColor } from './live-view.js';
import { connectModel, refuseModelWithoutKey } from './model.js';
import {
  batonHome,
  deriveProjectId,
  projectPaths,
  readProject,
  writeProject,
  writeProjectSync,
  addSessionUsage,
  type ProjectRecord,
} from './project-home.js';
import { CLI_ENV_VARIABLES } from './environment.js';
import { outputJson } from './terminal-text.js';

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
    differs('the workspace', existing.workspace);
  }
  if (options.repo !== undefined && options.repo !== (existing.repo ?? undefined)) {
    const current = existing.repo ?? 'no --repo';
    if (path.resolve(options.repo) !== current) differs('the repository', current);
  }
  if (options.base !== undefined && options.base !== existing.base) {
    differs('the base', existing.base ?? '(none)');
  }
  if (options.skipHooks === true && existing.skipHooks !== true) {
    throw new CliError(
      'usage',
      `project ${existing.id} runs hooks; --skip-hooks is set when a project is created.`,
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

/** `--workspace DIR` must be a directory Baton may make its own (`checkWorkspaceDir`). */
async function checkWorkspaceOption(workspace: string | undefined): Promise<void> {
  if (workspace === undefined) return;
  try {
    await checkWorkspaceDir(workspace);
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
    return await resolveProjectSource({
      repo: options.repo,
      ...(options.base === undefined ? {} : { base: options.base }),
      projectId: id,
    });
  } catch (error) {
    if (error instanceof WorkspaceError) throw new CliError('usage', error.message);
    throw error;
  }
}

/** Find or create the project record for this run. */
async function openProject(options: RunOptions, home: string): Promise<ProjectRecord> {
  const goal = await readGoal(options);
  if (options.project !== undefined) {
    const existing = await readProject(projectPaths(home, options.project));
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
        `no project ${options.project} under ${home}; give --goal or --goal-file to start it.`,
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
  await checkWorkspaceOption(options.workspace);
  const source = await resolveSource(options, id);
  const paths = projectPaths(home, id);
  const record: ProjectRecord = {
    id,
    goal,
    workspace: options.workspace !== undefined ? path.resolve(options.workspace) : paths.workspace,
    createdAt: new Date().toISOString(),
    sessions: 0,
    running: false,
    repo: source?.repo ?? null,
    base: source?.base ?? null,
    baseCommit: source?.baseCommit ?? null,
    branch: projectBranch(id),
    lastCheckpoint: source?.existingHead ?? null,
    skipHooks: options.skipHooks === true,
    sandbox: readProjectSandbox(options) ?? null,
  };
  await writeProject(paths, record);
  return record;
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

/** `BATON_CHECKPOINT_INTERVAL_MS`: least time between two checkpoints after turns. */
function checkpointIntervalMs(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = env[CLI_ENV_VARIABLES.checkpointIntervalMs]?.trim();
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) {
    throw new CliError(
      'usage',
      `BATON_CHECKPOINT_INTERVAL_MS must be an integer >= 0, got "${value}".`,
    );
  }
  return parsed;
}

function exitCodeFor(result: SessionResult, budgetLeft: number | undefined): number | undefined {
  switch (result.outcome) {
    case 'cancelled':
      return EXIT_CODES.cancelled;
    case 'refused':
      return EXIT_CODES.refused;
    case 'failed':
      return EXIT_CODES.sessionFailed;
    default:
      if (result.stopReason === 'max_usd' || (budgetLeft !== undefined && budgetLeft <= 0))
        return EXIT_CODES.budgetExhausted;
      return undefined;
  }
}

/** Run sessions of one project until every feature passes; returns the exit code. */
export async function runProject(options: RunOptions): Promise<number> {
  const home = batonHome();
  // Read before anything starts, so a bad value stops the run with nothing to clean up.
  const sandboxSetting = readSandboxSetting(options);
  const intervalMs = checkpointIntervalMs();
  const context = await readContextConfig(options);
  refuseModelWithoutKey(options.model === undefined ? {} : { model: options.model });
  const project = await openProject(options, home);
  const paths = projectPaths(home, project.id);
  // The store enforces the memory quotas atomically, so the handler skips its own usage() check.
  const store = await createFileSystemStore({
    root: paths.memories,
    limits: memoryStoreLimits(),
  });
  const transcripts = createFileTranscriptStore({ dir: paths.transcripts });
  const json = options.json === true;
  const output = createLiveView({
    write: (text) => process.stdout.write(text),
    color: !json && shouldUseColor(process.stdout),
    statusLine: !json && process.stdout.isTTY === true,
    timestamps: false,
    ...(process.stdout.columns === undefined ? {} : { columns: process.stdout.columns }),
  });
  const say = (text: string) => (json ? process.stderr.write(`${text}\n`) : output.line(text));
  const connection = await connectModel({
    ...(options.model === undefined ? {} : { model: options.model }),
  });
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
  const sandboxSetup = sessionSandboxSetup(sandbox, project.sandbox ?? null);
  const allowedHosts = project.sandbox?.allowedHosts ?? [];
  if (sandbox.kind === 'sandboxed' && allowedHosts.length > 0) {
    say(`Allowed hosts: ${allowedHosts.join(', ')} (through the sandbox proxy).`);
  }
  // Baton's own clone of the project's repository (or of a bare repository it owns), on
  // baton/<id>; the user's checkout is never written. Its commit hooks run in the sandbox.
  const workspace = openProjectWorkspace({
    home,
    projectId: project.id,
    repo: project.repo ?? null,
    baseCommit: project.baseCommit ?? null,
    skipHooks: project.skipHooks === true,
    dir: project.workspace,
    hookSandbox: sandboxSetup,
  });

  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts === 1) {
      say(
        'Ctrl-C: ending the session cleanly (end-of-session turn). Press Ctrl-C again to quit at once.',
      );
      controller.abort();
    } else {
      process.exit(EXIT_CODES.cancelled);
    }
  };
  process.on('SIGINT', onSigint);
  const continueHint = `Continue with: baton run --project ${project.id}${process.env.BATON_HOME ? ` (BATON_HOME=${process.env.BATON_HOME})` : ''}`;

  // Continuing a project is a user's resume: the no-progress streak starts again.
  if (options.stallAfter !== undefined) project.maxSessionsWithoutProgress = options.stallAfter;
  project.sessionsWithoutProgress = 0;
  project.statusReason = null;
  await writeProject(paths, project);
  const recordEvent = (event: object) => {
    const line = outputJson(event);
    appendFileSync(paths.events, `${line}\n`, { mode: 0o600 });
    if (json) process.stdout.write(`${line}\n`);
  };

  let exitCode: number = EXIT_CODES.featuresRemaining;
  let budgetLeft = options.budgetUsd;
  let totalUsd = 0;
  try {
    say(
      `Project ${project.id} · ${project.repo ? `repo ${project.repo} · base ${project.base} · ` : ''}branch ${projectBranch(project.id)} · workspace ${project.workspace} · memory ${paths.memories}`,
    );
    let pushProblem: string | undefined;
    for (let index = 0; index < options.sessions; index += 1) {
      const features = await readFeatures(store);
      if (features !== null && allFeaturesPass(features)) break;
      const kind = nextSessionKind(features);
      const interrupted =
        project.running || project.lastOutcome === 'cancelled' || project.lastOutcome === 'failed';
      try {
        await workspace.prepare(project.lastCheckpoint ?? null);
      } catch (error) {
        if (!(error instanceof WorkspaceError)) throw error;
        say(`The workspace could not be prepared: ${error.message}`);
        exitCode =
          error.code === 'repo_unreachable'
            ? EXIT_CODES.featuresRemaining
            : EXIT_CODES.sessionFailed;
        pushProblem = error.message;
        break;
      }
      project.sessions += 1;
      project.running = true;
      await writeProject(paths, project);
      const result = await runSession({
        project: { id: project.id, goal: project.goal },
        kind,
        store,
        workspace: workspace.dir,
        checkpoints: {
          target: workspace,
          ...(intervalMs === undefined ? {} : { intervalMs }),
        },
        client: connection.client,
        model: connection.model,
        ...(fallbackModel === undefined ? {} : { fallbackModel }),
        context,
        sessionNumber: project.sessions,
        interrupted,
        memoryQuotaEnforcement: 'store',
        tools: { sandbox: sandboxSetup },
        lastCheckpoint: project.lastCheckpoint ?? null,
        transcript: transcripts,
        signal: controller.signal,
        budgets: {
          ...(budgetLeft === undefined ? {} : { maxUsd: budgetLeft }),
          ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
        },
        onEvent: (event) => {
          traces?.tracing.record(event);
          if (event.type === 'checkpoint' && event.pushed && event.head !== null) {
            // Acknowledged: the next session (on any machine) starts from here.
            project.lastCheckpoint = event.head;
            writeProjectSync(paths, project);
          }
          // Synchronous so lines stay in event order; `baton logs --local -f` follows this file.
          const line = outputJson(event);
          appendFileSync(paths.events, `${line}\n`, { mode: 0o600 });
          if (json) process.stdout.write(`${line}\n`);
          // A session's own events are decoded events as they are (what `baton logs` reads back).
          else output.onEvent(event);
        },
      });
      project.running = false;
      project.lastOutcome = result.outcome;
      project.totals = addSessionUsage(project.totals, result.usage);
      const progress = sessionProgress({
        ...result,
        kind,
        abortReason: controller.signal.aborted ? 'cancelled' : undefined,
      });
      if (progress === 'progressed') project.sessionsWithoutProgress = 0;
      if (progress === 'none')
        project.sessionsWithoutProgress = (project.sessionsWithoutProgress ?? 0) + 1;
      const apiPause = result.allFeaturesPass
        ? null
        : apiPauseReason({
            ...result,
            counters: { sessionsWithoutProgress: project.sessionsWithoutProgress ?? 0 },
          });
      const stalled = result.allFeaturesPass
        ? null
        : (apiPause ??
          noProgressReason(
            project.maxSessionsWithoutProgress === undefined
              ? {}
              : { maxSessionsWithoutProgress: project.maxSessionsWithoutProgress },
            {
              sessionsWithoutProgress: project.sessionsWithoutProgress ?? 0,
              featuresPassing: result.featuresAfter.passing,
              featuresTotal: result.featuresAfter.total,
            },
          ));
      if (stalled !== null) project.statusReason = stalled;
      await writeProject(paths, project);
      totalUsd += result.usage.costUsd;
      if (budgetLeft !== undefined) budgetLeft -= result.usage.costUsd;
      // A pause after the API's answer (auth, context_full) is reported as a pause below.
      const stop = controller.signal.aborted
        ? EXIT_CODES.cancelled
        : apiPause !== null
          ? undefined
          : exitCodeFor(result, budgetLeft);
      if (result.checkpointError !== undefined) {
        // The session's work is not on the branch: never `completed`, paused with the reason.
        pushProblem = `${CHECKPOINT_FAILED_REASON}: the last checkpoint could not be saved: ${result.checkpointError}`;
        recordEvent({
          v: 1,
          type: 'project-status',
          at: Date.now(),
          projectId: project.id,
          from: 'running',
          to: 'paused',
          reason: pushProblem,
        });
        say(`Paused: ${pushProblem}`);
        exitCode = stop ?? EXIT_CODES.featuresRemaining;
        break;
      }
      const checkpoint = result.checkpoint;
      if (checkpoint !== undefined && !checkpoint.pushed && checkpoint.head !== null) {
        // Nothing is lost (the commits stay in this clone and the next run pushes them first),
        // but the run stops until the remote takes them.
        pushProblem = `checkpoint ${checkpoint.head.slice(0, 12)} was not pushed: ${checkpoint.pushError?.message ?? 'unknown reason'}`;
        say(pushProblem);
        exitCode =
          checkpoint.pushError?.code === 'push_rejected'
            ? EXIT_CODES.sessionFailed
            : (stop ?? EXIT_CODES.featuresRemaining);
        break;
      }
      if (stop !== undefined) {
        exitCode = stop;
        break;
      }
      if (stalled !== null) {
        // The same event the worker publishes when its chaining policy pauses a project.
        recordEvent({
          v: 1,
          type: 'project-status',
          at: Date.now(),
          projectId: project.id,
          from: 'running',
          to: 'paused',
          reason: stalled,
        });
        say(`Paused: ${stalled}.`);
        exitCode = result.stopReason === 'auth' ? EXIT_CODES.sessionFailed : EXIT_CODES.noProgress;
        break;
      }
      if (kind === 'init' && nextSessionKind(await readFeatures(store)) === 'init') {
        say('The init session wrote no valid /memories/features.json; stopping.');
        exitCode = EXIT_CODES.sessionFailed;
        break;
      }
    }
    const finalFeatures = await readFeatures(store);
    if (allFeaturesPass(finalFeatures) && pushProblem === undefined) exitCode = EXIT_CODES.ok;
    const counts = {
      passing: finalFeatures?.filter((feature) => feature.passes).length ?? 0,
      total: finalFeatures?.length ?? 0,
    };
    const summary = {
      type: 'run-end',
      projectId: project.id,
      exitCode,
      features: counts,
      sessions: project.sessions,
      costUsd: Number(totalUsd.toFixed(6)),
      branch: projectBranch(project.id),
      lastCheckpoint: project.lastCheckpoint ?? null,
    };
    if (json) process.stdout.write(`${outputJson(summary)}\n`);
    else say(`Features ${featureBar(counts)} · ${formatUsd(totalUsd)} this run · exit ${exitCode}`);
    if (exitCode !== EXIT_CODES.ok)
      say(exitCode === EXIT_CODES.cancelled ? `Stopped. ${continueHint}` : continueHint);
    return exitCode;
  } finally {
    output.close();
    process.off('SIGINT', onSigint);
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
