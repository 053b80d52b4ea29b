import { randomUUID } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import { type TurnUsage, defineContextConfig, emptyUsageTotals } from '@baton/context-config';
import type { MemoryStore } from '@baton/core';
import { countFeatures, readFeatures } from '@baton/session';
import {
  DEFAULT_SANDBOX_SETUP,
  WorkspaceError,
  describeSandbox,
  openProjectWorkspace,
  type PreparedWorkspace,
  type ProjectWorkspace,
  type PushRetryOptions,
} from '@baton/workspace';
import { DelayedError, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import {
  acquireProjectLease,
  createRedisGuidance,
  createRedisTranscripts,
  decideAfterSession,
  describeError,
  enqueueSession,
  isFailedSession,
  nextSessionKind,
  sessionProgress,
  startLeaseHeartbeat,
  type AbortReason,
  type ActiveSessionInfo,
  type LeaseOptions,
  type ProjectRecord,
  type ProjectRepository,
  type WorkerEvent,
  type SessionBudgetsInput,
  type SessionCheckpointSummary,
  type SessionJobData,
  type SessionSummary,
} from '@baton/projects';
import type { WorkerMetrics } from './metrics.js';
import type {
  SessionRunner,
  WorkerRunSessionOptions,
  WorkerSessionEvent,
  WorkerSessionResult,
} from './session-runner.js';

/** What a session job returns (stored by BullMQ as the job's return value). */
export type SessionJobResult =
  | { ran: false; skipped: string }
  | {
      ran: true;
      sessionId: string;
      outcome: string;
      decision: string;
      status: string | null;
    };

/** A running session, so cancel requests and shutdown can reach it. */
export interface RunningSession {
  projectId: string;
  jobId: string;
  sessionId: string;
  abort(reason: AbortReason): void;
  /** An operator paused the project: the session closes its log and stops. */
  pause(): void;
}

export interface SessionProcessorOptions {
  repository: ProjectRepository;
  /** Producer queue used to chain the next session. */
  queue: Queue<SessionJobData>;
  lease: LeaseOptions;
  /** Runs one session; default in the worker is `runSession` from `@baton/session`. */
  runSession: SessionRunner;
  client: Anthropic;
  /** The memory of one project. */
  memoryStore: (projectId: string) => MemoryStore | Promise<MemoryStore>;
  /** Extra options merged into every `runSession` call (context config, tools, ...). */
  sessionOptions?: (project: ProjectRecord) => Partial<WorkerRunSessionOptions>;
  defaultModel: string;
  /** Sees every event of every session before it is published (traces). Default: none. */
  observeEvent?: (event: WorkerSessionEvent) => void;
  /** Fallback model for projects that name none (`BATON_FALLBACK_MODEL`). Default: none. */
  defaultFallbackModel?: string;
  workerId: string;
  logger: Logger;
  metrics?: WorkerMetrics;
  chainDelayMs: number;
  retryDelayMs: number;
  maxConsecutiveFailures: number;
  /** Sessions running in this process, by project id. */
  running: Map<string, RunningSession>;
  /** Upper bound on how long a job waits before retrying a busy lease. Default 500 ms. */
  leaseBusyRetryMs?: number;
  /** True once this worker is shutting down: jobs fetched after that go back to the queue. */
  stopping?: () => boolean;
  /**
   * This worker's `BATON_HOME`, absolute: it keeps its own clone of each project under it
   * (`workspaces/<id>`, `git/<id>.git`) and needs nothing of another worker's disk.
   */
  home: string;
  /** Least time between two checkpoints after turns that changed files (ms). Default the session's (5000). */
  checkpointIntervalMs?: number;
  /** Retries of checkpoint pushes. Default `@baton/workspace`'s (4 final attempts, 0.5 s doubling). */
  push?: PushRetryOptions;
}

const RUNNABLE = ['queued', 'running'] as const;

/**
 * The BullMQ processor for `baton-sessions`. It declares three parameters because BullMQ only
 * creates the AbortSignal for processors whose `length` is at least 3.
 */
export function createSessionProcessor(options: SessionProcessorOptions) {
  const { repository, logger } = options;
  const busyRetryMs = options.leaseBusyRetryMs ?? 500;

  return async function processSessionJob(
    job: Job<SessionJobData>,
    token: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<SessionJobResult> {
    const { projectId, sessionNumber } = job.data;
    const jobId = job.id ?? '';
    const log = logger.child({ projectId, jobId, sessionNumber });

    const skipped = (why: string): SessionJobResult => {
      log.info({ skipped: why }, 'session job skipped');
      return { ran: false, skipped: why };
    };

    const before = await repository.get(projectId);
    if (!before) return skipped('project does not exist');
    if (!(RUNNABLE as readonly string[]).includes(before.status)) {
      return skipped(`project is ${before.status}`);
    }
    if (sessionNumber <= before.counters.sessions) {
      return skipped(`session ${sessionNumber} already ran`);
    }

    if (options.stopping?.()) {
      // Fetched while shutting down: hand it straight back for another worker.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    const claim = await acquireProjectLease(options.lease, projectId);
    if (!claim.acquired) {
      // Another session of this project is running somewhere: come back shortly. The job keeps
      // its id, so this never creates a second queued session.
      const delay = Math.min(claim.retryInMs, busyRetryMs) + Math.floor(Math.random() * 100);
      log.debug({ delay }, 'project lease busy; job delayed');
      await job.moveToDelayed(Date.now() + delay, token);
      throw new DelayedError();
    }
    const lease = claim.lease;
    const controller = new AbortController();
    let abortReason: AbortReason | undefined;
    const abort = (reason: AbortReason) => {
      if (controller.signal.aborted) return;
      abortReason = reason;
      controller.abort(reason);
    };
    // A pause is not an abort of the job: the session still runs its end-of-session turn.
    const pauseController = new AbortController();
    const pause = () => {
      if (controller.signal.aborted || pauseController.signal.aborted) return;
      abortReason = 'paused';
      pauseController.abort();
    };
    const onJobAbort = () => abort(toAbortReason(signal?.reason));
    signal?.addEventListener('abort', onJobAbort, { once: true });
    if (signal?.aborted) onJobAbort();

    const heartbeat = startLeaseHeartbeat(lease, {
      intervalMs: Math.max(250, Math.floor(lease.ttlMs / 4)),
      onLost: () => {
        log.warn('project lease lost; aborting session');
        abort('lease_lost');
      },
      onStatus: (status) => {
        if (status === 'cancelled') abort('cancelled');
        else if (status === 'paused') pause();
      },
      onError: (error) => log.warn({ err: error }, 'lease renewal failed'),
    });

    const sessionId = randomUUID();
    let registered = false;
    try {
      // Re-read under the lease: the previous holder may have finished this session meanwhile.
      const project = await repository.get(projectId);
      if (!project) return skipped('project does not exist');
      if (!(RUNNABLE as readonly string[]).includes(project.status)) {
        return skipped(`project is ${project.status}`);
      }
      if (sessionNumber <= project.counters.sessions) {
        return skipped(`session ${sessionNumber} already ran`);
      }

      const previous = project.activeSession;
      const interrupted = previous !== null;
      if (previous) {
        options.metrics?.interruptions.inc();
        log.warn({ previous }, 'previous session was interrupted; resuming');
        await repository.appendEvent(projectId, {
          v: 1,
          type: 'session-interrupted',
          at: Date.now(),
          projectId,
          sessionId: previous.sessionId,
          sessionNumber: previous.sessionNumber,
          jobId: previous.jobId,
          workerId: previous.workerId,
        });
      }
      const moved = await repository.transition(projectId, 'running', {
        from: RUNNABLE,
        reason: `session ${sessionNumber}`,
      });
      if (!moved.ok) return skipped(`project is ${moved.current ?? 'gone'}`);

      const extraOptions = options.sessionOptions?.(project) ?? {};
      await repository.markSessionStart(
        projectId,
        { sessionId, sessionNumber, jobId, workerId: options.workerId, startedAt: Date.now() },
        interrupted,
        describeSandbox(extraOptions.tools?.sandbox ?? DEFAULT_SANDBOX_SETUP),
      );
      await repository.appendEvent(projectId, {
        v: 1,
        type: 'session-claimed',
        at: Date.now(),
        projectId,
        sessionId,
        sessionNumber,
        jobId,
        workerId: options.workerId,
        interrupted,
      });
      options.running.set(projectId, { projectId, jobId, sessionId, abort, pause });
      registered = true;
      options.metrics?.activeSessions.inc();

      const store = await options.memoryStore(projectId);
      const workspace = openProjectWorkspace({
        home: options.home,
        projectId,
        repo: project.repo,
        baseCommit: project.baseCommit,
        skipHooks: project.skipHooks,
        ...(project.workspace === null ? {} : { dir: project.workspace }),
        ...(options.push === undefined ? {} : { push: options.push }),
      });
      const prepared = await prepareWorkspace(workspace, project.lastCheckpoint);
      if (prepared.ok) {
        await publish({
          v: 1,
          type: 'workspace-prepared',
          at: Date.now(),
          projectId,
          sessionId,
          sessionNumber,
          jobId,
          workerId: options.workerId,
          ...prepared.workspace,
        });
      }
      if (previous) {
        await recordInterruption(store, previous, {
          sessionNumber,
          sessionId,
          branch: workspace.branch,
          checkpoint: prepared.ok ? prepared.workspace.head : null,
          log,
        });
      }
      const features = await readFeatures(store);
      const kind = nextSessionKind(features);
      const sessionLog = log.child({ sessionId, kind });
      sessionLog.info(
        { interrupted, checkpoint: prepared.ok ? prepared.workspace.head : null },
        prepared.ok ? 'session started' : 'workspace not ready; session not started',
      );

      const result = prepared.ok
        ? await runGuarded(options.runSession, {
            context: defineContextConfig(project.context),
            // Memory stores are created with the tool's limits and enforce them atomically in Lua.
            memoryQuotaEnforcement: 'store',
            ...extraOptions,
            project: { id: project.id, goal: project.goal },
            kind,
            store,
            workspace: workspace.dir,
            checkpoints: {
              target: workspace,
              ...(options.checkpointIntervalMs === undefined
                ? {}
                : { intervalMs: options.checkpointIntervalMs }),
            },
            client: options.client,
            model: project.model ?? options.defaultModel,
            ...fallbackModelOption(project, options.defaultFallbackModel),
            budgets: sessionBudgets(project),
            signal: controller.signal,
            pauseSignal: pauseController.signal,
            guidance: createRedisGuidance({
              redis: repository.redis,
              keys: repository.keys,
              projectId,
            }),
            transcript: createRedisTranscripts({
              redis: repository.redis,
              keys: repository.keys,
              projectId,
            }),
            sessionId,
            sessionNumber,
            interrupted,
            // Shown in the resume orientation: which commit the branch was last saved at.
            lastCheckpoint: project.lastCheckpoint,
            onEvent: (event) => {
              options.observeEvent?.(event);
              return publish(event);
            },
          })
        : notStarted(sessionId, kind, features, prepared.error);
      heartbeat.stop();
      const workspaceProblem = prepared.ok ? unpushedCheckpoint(result) : prepared.pause;

      const failed = isFailedSession({
        outcome: result.outcome,
        featuresAfter: result.featuresAfter,
        abortReason,
      });
      const summary: SessionSummary = {
        sessionId,
        sessionNumber,
        kind,
        outcome: result.outcome,
        reason: result.reason,
        interrupted,
        turns: result.turns,
        inputTokens: result.usage.inputTokens,
        cacheReadInputTokens: result.usage.cacheReadInputTokens,
        cacheCreationInputTokens: result.usage.cacheCreationInputTokens,
        outputTokens: result.usage.outputTokens,
        clearedInputTokens: result.usage.clearedInputTokens,
        costUsd: result.usage.costUsd,
        featuresBefore: result.featuresBefore,
        featuresAfter: result.featuresAfter,
        flippedFeatures: result.flippedFeatures,
        startedAt: result.startedAt,
        endedAt: result.endedAt,
        jobId,
        workerId: options.workerId,
        ...(result.error !== undefined ? { error: result.error } : {}),
        commits: result.commits,
        model: project.model ?? options.defaultModel,
        ...(result.fallback === undefined ? {} : { fallback: result.fallback }),
        ...(result.checkpoint === undefined
          ? {}
          : { checkpoint: checkpointSummary(result.checkpoint) }),
      };
      if (failed && summary.error === undefined && result.featuresAfter.total === 0) {
        summary.error = 'the session ended without a feature checklist in memory';
      }

      if (abortReason === 'lease_lost' || abortReason === 'lock_lost') {
        // Another worker may already be running this session again: leave the record alone.
        sessionLog.warn({ abortReason, outcome: result.outcome }, 'session abandoned');
        options.metrics?.sessions.inc({ outcome: 'abandoned' });
        return { ran: true, sessionId, outcome: result.outcome, decision: 'abandon', status: null };
      }

      await repository.recordSessionEnd(projectId, summary, {
        failed,
        progress: sessionProgress({ ...result, kind, abortReason }),
      });
      options.metrics?.sessions.inc({ outcome: result.outcome });
      options.metrics?.costUsd.inc(result.usage.costUsd);

      const after = await repository.require(projectId);
      const decision = decideAfterSession({
        outcome: result.outcome,
        reason: result.reason,
        ...(summary.error !== undefined ? { error: summary.error } : {}),
        allFeaturesPass: result.allFeaturesPass,
        featuresAfter: result.featuresAfter,
        abortReason,
        status: after.status,
        counters: after.counters,
        budgets: after.budgets,
        lastError: after.lastError,
        ...(workspaceProblem === undefined ? {} : { workspaceProblem }),
        chainDelayMs: options.chainDelayMs,
        retryDelayMs: options.retryDelayMs,
        maxConsecutiveFailures: options.maxConsecutiveFailures,
      });
      sessionLog.info(
        { outcome: result.outcome, reason: result.reason, decision },
        'session finished',
      );

      let status: string | null = after.status;
      if (decision.kind === 'finish') {
        const moved = await repository.transition(projectId, decision.status, {
          from: RUNNABLE,
          reason: decision.reason,
          ...(decision.budgetReached ? { budgetReached: true } : {}),
        });
        status = moved.ok ? decision.status : moved.current;
      } else if (decision.kind === 'next') {
        // Queued before the lease is released so a crash right here cannot lose the chain; the
        // next job waits for the lease if it starts first.
        const moved = await repository.transition(projectId, 'queued', {
          from: RUNNABLE,
          reason: decision.reason,
        });
        status = moved.ok ? 'queued' : moved.current;
        if (moved.ok) {
          await enqueueSession(
            options.queue,
            repository,
            { projectId, sessionNumber: after.counters.sessions + 1, reason: decision.jobReason },
            { delayMs: decision.delayMs },
          );
        }
      }
      await repository.appendEvent(projectId, {
        v: 1,
        type: 'session-released',
        at: Date.now(),
        projectId,
        sessionId,
        sessionNumber,
        jobId,
        workerId: options.workerId,
        outcome: result.outcome,
      });
      return { ran: true, sessionId, outcome: result.outcome, decision: decision.kind, status };
    } finally {
      heartbeat.stop();
      signal?.removeEventListener('abort', onJobAbort);
      if (registered) {
        options.running.delete(projectId);
        options.metrics?.activeSessions.dec();
      }
      try {
        await lease.release();
      } catch (error) {
        // It expires on its own after ttlMs.
        log.warn({ err: error }, 'could not release project lease');
      }
    }
  };

  async function publish(event: WorkerSessionEvent | WorkerEvent): Promise<void> {
    const metrics = options.metrics;
    if (metrics) countEvent(metrics, event);
    try {
      if (event.type === 'checkpoint' && event.pushed && event.head !== null) {
        // Acknowledged: the next session, on whichever worker, starts from this commit.
        await repository.setLastCheckpoint(event.projectId, event.head);
      }
      await repository.appendEvent(event.projectId, event);
    } catch (error) {
      // Events are for observers; a failed XADD must not fail the session.
      logger.warn(
        { projectId: event.projectId, type: event.type, err: error },
        'could not publish event',
      );
    }
  }
}

/** A runner that throws still produces a result, so the project's record stays truthful. */
async function runGuarded(
  runSession: SessionRunner,
  sessionOptions: WorkerRunSessionOptions,
): Promise<WorkerSessionResult> {
  const startedAt = Date.now();
  try {
    return await runSession(sessionOptions);
  } catch (error) {
    const none = { passing: 0, total: 0 };
    return {
      sessionId: sessionOptions.sessionId ?? '',
      kind: sessionOptions.kind,
      outcome: 'failed',
      reason: `session crashed: ${describeError(error)}`,
      stopReason: 'internal_error',
      commits: [],
      progressEntry: 'none',
      turns: 0,
      usage: emptyUsageTotals(),
      featuresBefore: none,
      featuresAfter: none,
      allFeaturesPass: false,
      flippedFeatures: [],
      startedAt,
      endedAt: Date.now(),
      error: describeError(error),
    };
  }
}

/**
 * Notes a crash in the progress log, so the next agent (and a human reading memory) knows the
 * previous session stopped without its end-of-session entry, and which checkpoint of the branch
 * the workspace now holds (work after it was lost with the crashed worker).
 */
async function recordInterruption(
  store: MemoryStore,
  previous: ActiveSessionInfo,
  next: {
    sessionNumber: number;
    sessionId: string;
    branch: string;
    checkpoint: string | null;
    log: Logger;
  },
): Promise<void> {
  const from =
    next.checkpoint === null
      ? `The workspace starts from the base of ${next.branch} (no checkpoint was pushed).`
      : `The workspace starts from checkpoint ${next.checkpoint.slice(0, 12)} of ${next.branch}; changes after it were lost.`;
  const note =
    `\n## Session ${previous.sessionNumber} interrupted\n` +
    `- It started at ${new Date(previous.startedAt).toISOString()} and never finished ` +
    `(its worker stopped). Session ${next.sessionNumber} resumes the work.\n` +
    `- ${from}\n`;
  try {
    await store.edit('progress.md', (current) => `${current.replace(/\n*$/, '\n')}${note}`, {
      command: 'insert',
      session: next.sessionId,
    });
  } catch (error) {
    // No progress log yet (the crash hit the init session): the new session writes one.
    next.log.debug({ err: error }, 'could not note the interruption in progress.md');
  }
}

type PrepareOutcome =
  | { ok: true; workspace: PreparedWorkspace }
  /** `pause`: the remote cannot be reached (the project waits for a user); else the session fails. */
  | { ok: false; error: string; pause?: string };

/**
 * Brings this worker's clone to the branch's last checkpoint. Commits an earlier session on this
 * worker could not push are pushed first: a session never starts on work the remote lacks.
 */
async function prepareWorkspace(
  workspace: ProjectWorkspace,
  lastCheckpoint: string | null,
): Promise<PrepareOutcome> {
  let prepared: PreparedWorkspace;
  try {
    prepared = await workspace.prepare(lastCheckpoint);
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    const message = `the workspace could not be prepared: ${error.message}`;
    return error.code === 'repo_unreachable'
      ? { ok: false, error: message, pause: message }
      : { ok: false, error: message };
  }
  if (prepared.recovered) {
    const pushed = await workspace.checkpoint({
      subject: 'baton: checkpoint of an earlier session',
      final: true,
    });
    if (!pushed.pushed) {
      const message = `checkpoint ${(pushed.head ?? '').slice(0, 12)} of an earlier session was not pushed: ${pushed.pushError?.message ?? 'unknown reason'}`;
      return pushed.pushError?.code === 'push_rejected'
        ? { ok: false, error: message }
        : { ok: false, error: message, pause: message };
    }
  }
  return { ok: true, workspace: prepared };
}

/** Why the session's last checkpoint is not on the remote (a rejection fails the session instead). */
function unpushedCheckpoint(result: WorkerSessionResult): string | undefined {
  const checkpoint = result.checkpoint;
  if (checkpoint === undefined || checkpoint.pushed || checkpoint.head === null) return undefined;
  if (checkpoint.pushError?.code === 'push_rejected') return undefined;
  return `checkpoint ${checkpoint.head.slice(0, 12)} was not pushed: ${checkpoint.pushError?.message ?? 'unknown reason'}`;
}

function checkpointSummary(
  checkpoint: NonNullable<WorkerSessionResult['checkpoint']>,
): SessionCheckpointSummary {
  return {
    head: checkpoint.head,
    pushed: checkpoint.pushed,
    hooks: checkpoint.hooks,
    skipped: checkpoint.skipped,
    ...(checkpoint.pushError === undefined ? {} : { error: checkpoint.pushError.message }),
  };
}

/** The result of a session that never started because its workspace could not be prepared. */
function notStarted(
  sessionId: string,
  kind: WorkerSessionResult['kind'],
  features: Awaited<ReturnType<typeof readFeatures>>,
  error: string,
): WorkerSessionResult {
  const counts = countFeatures(features);
  const now = Date.now();
  return {
    sessionId,
    kind,
    outcome: 'failed',
    reason: error,
    stopReason: 'workspace_unavailable',
    commits: [],
    progressEntry: 'none',
    turns: 0,
    usage: emptyUsageTotals(),
    featuresBefore: counts,
    featuresAfter: counts,
    allFeaturesPass: false,
    flippedFeatures: [],
    startedAt: now,
    endedAt: now,
    error,
  };
}

function toAbortReason(reason: unknown): AbortReason {
  const text = typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : '';
  if (text === 'shutdown' || text === 'lease_lost' || text === 'lock_lost') return text;
  return 'cancelled';
}

/** Session budgets: the project's per-session limits, capped by what is left of its USD budget. */
export function sessionBudgets(project: ProjectRecord): SessionBudgetsInput {
  const budgets: SessionBudgetsInput = { ...(project.budgets.session ?? {}) };
  if (project.budgets.maxUsd !== undefined) {
    const left = Math.max(0, project.budgets.maxUsd - project.counters.costUsd);
    budgets.maxUsd = budgets.maxUsd === undefined ? left : Math.min(budgets.maxUsd, left);
  }
  return budgets;
}

function countEvent(metrics: WorkerMetrics, event: WorkerSessionEvent | WorkerEvent): void {
  const data = event as unknown as Record<string, unknown>;
  if (event.type === 'turn') {
    const usage = data.usage as Partial<TurnUsage> | undefined;
    metrics.inputTokens.inc(usage?.inputTokens ?? 0);
    metrics.outputTokens.inc(usage?.outputTokens ?? 0);
    metrics.cacheReadInputTokens.inc(usage?.cacheReadInputTokens ?? 0);
    metrics.cacheWriteInputTokens.inc({ ttl: '5m' }, usage?.cacheWrite5mInputTokens ?? 0);
    metrics.cacheWriteInputTokens.inc({ ttl: '1h' }, usage?.cacheWrite1hInputTokens ?? 0);
    const cleared = data.clearedInputTokens;
    if (typeof cleared === 'number' && cleared > 0) metrics.clearedInputTokens.inc(cleared);
  } else if (event.type === 'tool-call' && data.isError === true) {
    metrics.toolErrors.inc({ tool: typeof data.tool === 'string' ? data.tool : 'unknown' });
  } else if (event.type === 'api-retry') {
    metrics.apiRetries.inc({
      status: typeof data.status === 'number' ? String(data.status) : 'network',
    });
  }
}

/** The project's fallback model, else the worker's (`BATON_FALLBACK_MODEL`). */
function fallbackModelOption(
  project: ProjectRecord,
  workerDefault: string | undefined,
): { fallbackModel?: string } {
  const fallbackModel = project.fallbackModel ?? workerDefault;
  return fallbackModel === undefined ? {} : { fallbackModel };
}
