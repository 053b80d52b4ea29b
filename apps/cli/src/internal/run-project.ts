import { defineContextConfig, summarizeContextConfig } from '@baton/context-config';
import { createFileSystemStore, memoryStoreLimits, type MemoryStore } from '@baton/core';
import { CHAIN_POLICIES } from '@baton/projects/schema';
import {
  PROJECT_TRANSITIONS,
  SessionControl,
  createFileGuidance,
  createSessionChain,
  openFileProjectLog,
  type ChainDecision,
  type FileProjectLog,
  type ProjectRecord,
  type ProjectSettings,
} from '@baton/projects';
import {
  MCP_CONFIG_ENV_VARIABLE,
  SessionError,
  type McpConfig,
  createFileTranscriptStore,
  describeMcpServer,
  mergeMcpConfigs,
  readFeatures,
  runSession,
  startOtlpTracing,
} from '@baton/session';
import {
  decideSandbox,
  describeSandboxDecision,
  sessionSandboxSetup,
  projectBranch,
  type SandboxDecision,
  type SandboxSetting,
} from '@baton/workspace';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { abortableDelay } from './abortable-delay.js';
import { featureBar, formatUsd } from './format.js';
import { createLiveView, shouldUseColor } from './live-view.js';
import { connectModel, refuseModelWithoutKey } from './model.js';
import { batonHome } from './project-home.js';
import { outputJson } from './terminal-text.js';
import { runExitCode } from './run-exit-codes.js';
import {
  checkpointIntervalMs,
  maxFileBytes,
  memorySnapshots,
  openProject,
  readMcpConfig,
  readSandboxSetting,
  settingsFromFlags,
  type RunOptions,
} from './run-setup.js';

export type { RunOptions } from './run-setup.js';

/** Run sessions of one project until the chain stops it; returns the exit code. */
export async function runProject(options: RunOptions): Promise<number> {
  const home = batonHome();
  // Read before anything starts, so a bad value stops the run with nothing to clean up.
  const sandboxSetting = readSandboxSetting(options);
  const workerMcp = readMcpConfig(process.env[MCP_CONFIG_ENV_VARIABLE], MCP_CONFIG_ENV_VARIABLE);
  const intervalMs = checkpointIntervalMs();
  const fileLimit = maxFileBytes();
  // Read before anything starts: a bad value thrown later left the simulator running (a hang).
  const snapshots = memorySnapshots();
  refuseFallbackAsModel(options);
  // The model the sessions will run, in the worker's precedence (--model, the project's stored
  // model, BATON_MODEL), checked before anything is created or changed: without --project or
  // with --model that is known before BATON_HOME is opened (opening it may upgrade its files).
  const modelKnown = options.model !== undefined || options.project === undefined;
  if (modelKnown) refuseModelWithoutKey({ model: options.model });
  const json = options.json === true;
  const log = await openFileProjectLog({
    home,
    // Every event the project's log gets, as `baton logs --local --json` shows it later.
    onAppend: json ? (event) => process.stdout.write(`${outputJson(event)}\n`) : undefined,
  });
  if (!modelKnown && options.project !== undefined) {
    const stored = await log.get(options.project);
    refuseModelWithoutKey({ model: stored?.model ?? undefined });
  }
  const opened = await openProject(options, log);
  const settings = settingsFromFlags(opened, options);
  const paths = log.paths(opened.id);
  // The store enforces the memory quotas atomically, so the handler skips its own usage() check.
  const store = await createFileSystemStore({
    root: paths.memories,
    limits: memoryStoreLimits(),
  });
  const output = createLiveView({
    write: (text) => process.stdout.write(text),
    color: !json && shouldUseColor(process.stdout),
    statusLine: !json && process.stdout.isTTY === true,
    timestamps: false,
    columns: process.stdout.columns,
  });
  const say = (text: string) => (json ? process.stderr.write(`${text}\n`) : output.line(text));
  // The project's model, replaced by --model: a worker runs the same one for the same record.
  const { connection, traces, sandbox } = await connectRun(
    options.model ?? opened.model ?? undefined,
    opened.fallbackModel,
    sandboxSetting,
    say,
  );
  announceProjectServices(opened, sandbox, workerMcp, say);
  const control = new SessionControl(undefined);
  const stopOnCtrlC = listenForCtrlC(log, opened.id, control, say);
  const statusWatch = watchOperatorStatus(log, opened.id, control);
  const project = await resumeLocally(log, opened, settings);
  say(`Context: ${summarizeContextConfig(defineContextConfig(project.context))}.`);

  const chain = createSessionChain({
    log,
    runSession,
    client: connection.client,
    workerId: 'local',
    home,
    // The worker's rules without its queue delays (side by side with the worker's there).
    ...CHAIN_POLICIES.local,
    defaultModel: connection.model,
    defaultFallbackModel: connection.fallbackModel,
    checkpointIntervalMs: intervalMs,
    maxFileBytes: fileLimit,
    memorySnapshots: snapshots,
    observeSessionEvent: (event) => {
      traces?.tracing.record(event);
      // A session's own events are decoded events as they are (what `baton logs` reads back).
      if (!json) output.onEvent(event);
    },
  });
  // No context here: every session resolves the project's stored config, as on a worker.
  const sessionOptions = {
    tools: { sandbox: sessionSandboxSetup(sandbox, project.sandbox) },
    mcp: { worker: workerMcp },
    transcript: createFileTranscriptStore({ dir: paths.transcripts }),
    // `baton say --local` adds to it from another process while the session runs.
    guidance: createFileGuidance(paths),
  };

  let decision: ChainDecision | undefined;
  /** Checkpoints of this run's sessions that could not be committed (retried, or the pause). */
  let checkpointFailures = 0;
  try {
    say(
      `Project ${project.id} · ${project.repo ? `repo ${project.repo} · base ${project.base} · ` : ''}branch ${projectBranch(project.id)} · workspace ${project.workspace} · memory ${paths.memories}`,
    );
    for (let index = 0; index < options.sessions && !control.signal.aborted; index += 1) {
      const { counters } = await log.require(project.id);
      const outcome = await chain.runOne({
        projectId: project.id,
        sessionNumber: counters.sessions + 1,
        jobId: `local-${counters.sessions + 1}`,
        control,
        memory: () => store,
        sessionOptions: () => sessionOptions,
        // `baton pause --local` or `baton cancel --local` from another process: the session
        // ends as a worker's does.
        onClaimed: () => statusWatch.start(),
        onSessionReturned: () => statusWatch.stop(),
      });
      if (!outcome.ran) break;
      decision = outcome.decision;
      checkpointFailures += outcome.result.checkpointFailures ?? 0;
      if (outcome.result.stopReason === 'workspace_unavailable') say(outcome.result.reason);
      if (decision.kind !== 'next') break;
      if (decision.cause === 'retry') say(`Retrying: ${decision.reason}.`);
      if (decision.delayMs > 0) await abortableDelay(decision.delayMs, control.signal);
    }
    const ended = await log.require(project.id);
    const exitCode = runExitCode({
      aborted: control.signal.aborted,
      status: ended.status,
      decision,
    });
    if (decision?.kind === 'finish' && decision.status !== 'completed') {
      say(`${decision.status === 'paused' ? 'Paused' : 'Failed'}: ${decision.reason}.`);
    } else if (ended.status === 'paused' && !control.signal.aborted) {
      // An operator's pause, seen at the decide step or before the next session's claim.
      say(`Paused: ${ended.statusReason ?? 'paused'}.`);
    } else if (ended.status === 'cancelled') {
      // Ctrl-C, or `baton cancel --local` from another process.
      say(`Cancelled: ${ended.statusReason ?? 'cancelled'}.`);
    }
    await reportRunEnd({
      project: ended,
      exitCode,
      store,
      costAtStart: project.counters.costUsd,
      checkpointFailures,
      json,
      say,
    });
    return exitCode;
  } finally {
    output.close();
    statusWatch.stop();
    stopOnCtrlC();
    control.dispose();
    await store.close();
    await connection.sim?.close();
    // Spans are batched: the run's last ones are sent before the process exits.
    await traces?.shutdown().catch(() => undefined);
  }
}

type Say = (text: string) => void;

/** `--fallback-model` naming the model given (`--model`, else BATON_MODEL), before anything is created. */
function refuseFallbackAsModel(options: RunOptions): void {
  const model = options.model ?? (process.env.BATON_MODEL?.trim() || undefined);
  if (options.fallbackModel !== undefined && options.fallbackModel === model) {
    throw new CliError(
      'usage',
      `--fallback-model is the model itself (${model}): a fallback is another model.`,
    );
  }
}

/**
 * The model (the project's, else the environment's, or the built-in simulator), traces and the
 * sandbox decision, each announced in one line; a fallback model (the project's
 * `--fallback-model`, else `BATON_FALLBACK_MODEL`) equal to the model, or a refused sandbox,
 * stops the run here.
 */
async function connectRun(
  model: string | undefined,
  projectFallback: string | null,
  sandboxSetting: SandboxSetting,
  say: Say,
) {
  const connection = await connectModel({ model });
  say(connection.notice);
  const traces = await startTraces(connection);
  if (traces !== undefined) say(`Traces: OTLP to ${traces.url}.`);
  const fallbackModel = projectFallback ?? connection.fallbackModel;
  if (fallbackModel !== undefined && fallbackModel === connection.model) {
    await connection.sim?.close();
    throw new CliError(
      'usage',
      `${projectFallback === null ? 'BATON_FALLBACK_MODEL' : "the project's --fallback-model"} is the model itself (${fallbackModel}): name another model, or unset it.`,
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
  return { connection, traces, sandbox };
}

/** The hosts the project's commands reach and its MCP servers, one line each when there are any. */
function announceProjectServices(
  project: ProjectRecord,
  sandbox: SandboxDecision,
  workerMcp: McpConfig | undefined,
  say: Say,
): void {
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
}

/**
 * The first Ctrl-C cancels the project as `baton cancel` does a worker's (the session gets its
 * end-of-session turn, a later run resumes it); a second one exits at once. Returns the remover.
 */
function listenForCtrlC(
  log: FileProjectLog,
  projectId: string,
  control: SessionControl,
  say: Say,
): () => void {
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts === 1) {
      say(
        'Ctrl-C: ending the session cleanly (end-of-session turn). Press Ctrl-C again to quit at once.',
      );
      void log
        .transition(projectId, PROJECT_TRANSITIONS.cancel.to, {
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
  return () => process.off('SIGINT', onSigint);
}

/** How often a running session looks for `baton pause --local` and `baton cancel --local`. */
const STATUS_WATCH_INTERVAL_MS = 250;

/**
 * While a session runs, watches the project's status as a worker's lease heartbeat does, and
 * follows it by the same rule (`SessionControl.followStatus`): once another process paused the
 * project (`baton pause --local`) the session gets its end-of-session turn, once it cancelled it
 * (`baton cancel --local`) the session is aborted; the chain's decide step then stops the run.
 */
function watchOperatorStatus(log: FileProjectLog, projectId: string, control: SessionControl) {
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    void log
      .get(projectId)
      .then((project) => {
        if (project !== null) control.followStatus(project.status);
      })
      .catch(() => undefined);
  };
  return {
    start(): void {
      if (timer === undefined) timer = setInterval(look, STATUS_WATCH_INTERVAL_MS).unref();
    },
    stop(): void {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/**
 * Continuing a project is a user's resume: the project options given replace the stored settings
 * (each its own), a stopped project is queued again and the failure and no-progress streaks start
 * again.
 */
async function resumeLocally(
  log: FileProjectLog,
  project: ProjectRecord,
  settings: ProjectSettings,
): Promise<ProjectRecord> {
  await log.setSettings(project.id, settings);
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
  return log.require(project.id);
}

/** The run's last lines: features, cost and exit code (a `run-end` JSON line with --json). */
async function reportRunEnd(end: {
  project: ProjectRecord;
  exitCode: number;
  store: MemoryStore;
  costAtStart: number;
  checkpointFailures: number;
  json: boolean;
  say: Say;
}): Promise<void> {
  const { project, exitCode, checkpointFailures, say } = end;
  const finalFeatures = await readFeatures(end.store);
  const counts = {
    passing: finalFeatures?.filter((feature) => feature.passes).length ?? 0,
    total: finalFeatures?.length ?? 0,
  };
  const runUsd = project.counters.costUsd - end.costAtStart;
  if (end.json) {
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
    process.stdout.write(`${outputJson(summary)}\n`);
  } else {
    const failed =
      checkpointFailures === 0
        ? ''
        : ` · ${checkpointFailures} checkpoint${checkpointFailures === 1 ? '' : 's'} failed`;
    say(
      `Features ${featureBar(counts)} · ${formatUsd(runUsd)} this run${failed} · exit ${exitCode}`,
    );
  }
  if (exitCode === EXIT_CODES.ok) return;
  const continueHint = `Continue with: baton run --project ${project.id}${process.env.BATON_HOME ? ` (BATON_HOME=${process.env.BATON_HOME})` : ''}`;
  say(exitCode === EXIT_CODES.cancelled ? `Stopped. ${continueHint}` : continueHint);
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
