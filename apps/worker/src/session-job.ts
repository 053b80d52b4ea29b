import { randomUUID } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import { defineContextConfig } from '@baton/context-config';
import type { MemoryStore } from '@baton/core';
import {
  acquireProjectLease,
  createRedisGuidance,
  createRedisTranscripts,
  decideAfterSession,
  enqueueSession,
  nextSessionKind,
  sessionProgress,
  startLeaseHeartbeat,
  type AbortReason,
  type ActiveSessionInfo,
  type LeaseOptions,
  type ChainDecision,
  type ProjectLease,
  type ProjectRecord,
  type ProjectRepository,
  type SessionJobData,
  type SessionSummary,
} from '@baton/projects';
import { readFeatures } from '@baton/session';
import {
  DEFAULT_SANDBOX_SETUP,
  describeSandbox,
  openProjectWorkspace,
  type ProjectWorkspace,
  type PushRetryOptions,
} from '@baton/workspace';
import { DelayedError, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { PublishEvent } from './event-publisher.js';
import type { WorkerMetrics } from './metrics.js';
import { SessionControl } from './session-control.js';
import {
  fallbackModelOption,
  notStarted,
  runGuarded,
  sessionBudgets,
  summarizeSession,
} from './session-results.js';
import type {
  SessionRunner,
  WorkerRunSessionOptions,
  WorkerSessionEvent,
  WorkerSessionResult,
} from './session-runner.js';
import {
  prepareWorkspace,
  recordInterruption,
  unpushedCheckpoint,
  type PrepareOutcome,
} from './session-workspace.js';

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

/** Options of `createSessionProcessor`, shared by every `SessionJob` of a worker. */
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

/** A session this job claimed: the project as read under the lease, and how the session begins. */
interface Claim {
  project: ProjectRecord;
  /** The session that held the project before and never finished (its worker stopped). */
  previous: ActiveSessionInfo | null;
  /** Extra `runSession` options for this project, from the worker's configuration. */
  extraOptions: Partial<WorkerRunSessionOptions>;
}

/** What a claimed session runs on: its memory, its workspace, and which kind of session it is. */
interface Setup {
  store: MemoryStore;
  workspace: ProjectWorkspace;
  prepared: PrepareOutcome;
  features: Awaited<ReturnType<typeof readFeatures>>;
  kind: WorkerSessionResult['kind'];
  log: Logger;
}

/**
 * One `baton-sessions` job, from the project lease to its release, as named steps: check the
 * job is still wanted, take the lease, claim the session, set up memory and workspace, run it,
 * record it, then carry out what `decideAfterSession` says happens next.
 */
export class SessionJob {
  private readonly projectId: string;
  private readonly sessionNumber: number;
  private readonly jobId: string;
  private readonly sessionId = randomUUID();
  private readonly log: Logger;

  constructor(
    private readonly options: SessionProcessorOptions,
    private readonly publish: PublishEvent,
    private readonly job: Job<SessionJobData>,
    private readonly token: string | undefined,
    private readonly jobSignal: AbortSignal | undefined,
  ) {
    this.projectId = job.data.projectId;
    this.sessionNumber = job.data.sessionNumber;
    this.jobId = job.id ?? '';
    this.log = options.logger.child({
      projectId: this.projectId,
      jobId: this.jobId,
      sessionNumber: this.sessionNumber,
    });
  }

  async run(): Promise<SessionJobResult> {
    const unwanted = this.whyNotRunnable(await this.options.repository.get(this.projectId));
    if (unwanted !== undefined) return this.skip(unwanted);
    const lease = await this.takeLease();
    const control = new SessionControl(this.jobSignal);
    const heartbeat = this.startHeartbeat(lease, control);
    let registered = false;
    try {
      const claim = await this.claim();
      if (typeof claim === 'string') return this.skip(claim);
      this.register(control);
      registered = true;
      const setup = await this.setUp(claim);
      const result = setup.prepared.ok
        ? await runGuarded(this.options.runSession, this.sessionOptions(claim, setup, control))
        : notStarted(this.sessionId, setup.kind, setup.features, setup.prepared.error);
      heartbeat.stop();
      return await this.finish(claim, setup, result, control);
    } finally {
      heartbeat.stop();
      control.dispose();
      if (registered) this.unregister();
      await this.releaseLease(lease);
    }
  }

  private skip(why: string): SessionJobResult {
    this.log.info({ skipped: why }, 'session job skipped');
    return { ran: false, skipped: why };
  }

  /** Why this job must not run its session now, if it must not. */
  private whyNotRunnable(project: ProjectRecord | null): string | undefined {
    if (!project) return 'project does not exist';
    if (!(RUNNABLE as readonly string[]).includes(project.status)) {
      return `project is ${project.status}`;
    }
    if (this.sessionNumber <= project.counters.sessions) {
      return `session ${this.sessionNumber} already ran`;
    }
    return undefined;
  }

  /** Takes the project's lease, or hands the job back to the queue (throwing `DelayedError`). */
  private async takeLease(): Promise<ProjectLease> {
    if (this.options.stopping?.()) {
      // Fetched while shutting down: hand it straight back for another worker.
      await this.job.moveToDelayed(Date.now(), this.token);
      throw new DelayedError();
    }
    const claim = await acquireProjectLease(this.options.lease, this.projectId);
    if (!claim.acquired) {
      // Another session of this project is running somewhere: come back shortly. The job keeps
      // its id, so this never creates a second queued session.
      const busyRetryMs = this.options.leaseBusyRetryMs ?? 500;
      const delay = Math.min(claim.retryInMs, busyRetryMs) + Math.floor(Math.random() * 100);
      this.log.debug({ delay }, 'project lease busy; job delayed');
      await this.job.moveToDelayed(Date.now() + delay, this.token);
      throw new DelayedError();
    }
    return claim.lease;
  }

  /** Renews the lease while the session runs, and turns a lost lease, cancel or pause into control. */
  private startHeartbeat(lease: ProjectLease, control: SessionControl): { stop(): void } {
    return startLeaseHeartbeat(lease, {
      intervalMs: Math.max(250, Math.floor(lease.ttlMs / 4)),
      onLost: () => {
        this.log.warn('project lease lost; aborting session');
        control.abort('lease_lost');
      },
      onStatus: (status) => {
        if (status === 'cancelled') control.abort('cancelled');
        else if (status === 'paused') control.pause();
      },
      onError: (error) => this.log.warn({ err: error }, 'lease renewal failed'),
    });
  }

  /**
   * Marks the project as running this session, noting an interrupted predecessor. Returns why
   * not when the project changed while this job waited for the lease.
   */
  private async claim(): Promise<Claim | string> {
    const { repository, workerId } = this.options;
    const { projectId, sessionId, sessionNumber, jobId } = this;
    // Re-read under the lease: the previous holder may have finished this session meanwhile.
    const project = await repository.get(projectId);
    const unwanted = this.whyNotRunnable(project);
    if (unwanted !== undefined || !project) return unwanted ?? 'project does not exist';

    const previous = project.activeSession;
    if (previous) await this.reportInterrupted(previous);
    const moved = await repository.transition(projectId, 'running', {
      from: RUNNABLE,
      reason: `session ${sessionNumber}`,
    });
    if (!moved.ok) return `project is ${moved.current ?? 'gone'}`;

    const extraOptions = this.options.sessionOptions?.(project) ?? {};
    await repository.markSessionStart(
      projectId,
      { sessionId, sessionNumber, jobId, workerId, startedAt: Date.now() },
      previous !== null,
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
      workerId,
      interrupted: previous !== null,
    });
    return { project, previous, extraOptions };
  }

  private async reportInterrupted(previous: ActiveSessionInfo): Promise<void> {
    this.options.metrics?.interruptions.inc();
    this.log.warn({ previous }, 'previous session was interrupted; resuming');
    await this.options.repository.appendEvent(this.projectId, {
      v: 1,
      type: 'session-interrupted',
      at: Date.now(),
      projectId: this.projectId,
      sessionId: previous.sessionId,
      sessionNumber: previous.sessionNumber,
      jobId: previous.jobId,
      workerId: previous.workerId,
    });
  }

  /** Lets cancel requests and shutdown reach the session. */
  private register(control: SessionControl): void {
    this.options.running.set(this.projectId, {
      projectId: this.projectId,
      jobId: this.jobId,
      sessionId: this.sessionId,
      abort: control.abort,
      pause: control.pause,
    });
    this.options.metrics?.activeSessions.inc();
  }

  private unregister(): void {
    this.options.running.delete(this.projectId);
    this.options.metrics?.activeSessions.dec();
  }

  /** Opens the project's memory, brings the workspace to the last checkpoint, picks the session kind. */
  private async setUp({ project, previous }: Claim): Promise<Setup> {
    const { projectId, sessionId, sessionNumber, jobId } = this;
    const store = await this.options.memoryStore(projectId);
    const workspace = openProjectWorkspace({
      home: this.options.home,
      projectId,
      repo: project.repo,
      baseCommit: project.baseCommit,
      skipHooks: project.skipHooks,
      // Commit hooks run in the same sandbox as the session's commands.
      hookSandbox: this.options.sessionOptions?.(project).tools?.sandbox,
      ...(project.workspace === null ? {} : { dir: project.workspace }),
      ...(this.options.push === undefined ? {} : { push: this.options.push }),
    });
    const prepared = await prepareWorkspace(workspace, project.lastCheckpoint);
    if (prepared.ok) {
      await this.publish({
        v: 1,
        type: 'workspace-prepared',
        at: Date.now(),
        projectId,
        sessionId,
        sessionNumber,
        jobId,
        workerId: this.options.workerId,
        ...prepared.workspace,
      });
    }
    const checkpoint = prepared.ok ? prepared.workspace.head : null;
    if (previous) {
      await recordInterruption(store, previous, {
        sessionNumber,
        sessionId,
        branch: workspace.branch,
        checkpoint,
        log: this.log,
      });
    }
    const features = await readFeatures(store);
    const kind = nextSessionKind(features);
    const log = this.log.child({ sessionId, kind });
    log.info(
      { interrupted: previous !== null, checkpoint },
      prepared.ok ? 'session started' : 'workspace not ready; session not started',
    );
    return { store, workspace, prepared, features, kind, log };
  }

  private sessionOptions(
    { project, previous, extraOptions }: Claim,
    { store, workspace, kind }: Setup,
    control: SessionControl,
  ): WorkerRunSessionOptions {
    const { repository } = this.options;
    const projectId = this.projectId;
    return {
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
        ...(this.options.checkpointIntervalMs === undefined
          ? {}
          : { intervalMs: this.options.checkpointIntervalMs }),
      },
      client: this.options.client,
      model: project.model ?? this.options.defaultModel,
      ...fallbackModelOption(project, this.options.defaultFallbackModel),
      budgets: sessionBudgets(project),
      signal: control.signal,
      pauseSignal: control.pauseSignal,
      guidance: createRedisGuidance({ redis: repository.redis, keys: repository.keys, projectId }),
      transcript: createRedisTranscripts({
        redis: repository.redis,
        keys: repository.keys,
        projectId,
      }),
      sessionId: this.sessionId,
      sessionNumber: this.sessionNumber,
      interrupted: previous !== null,
      // Shown in the resume orientation: which commit the branch was last saved at.
      lastCheckpoint: project.lastCheckpoint,
      onEvent: (event) => {
        this.options.observeEvent?.(event);
        return this.publish(event);
      },
    };
  }

  /** Records the session on the project and carries out what happens next. */
  private async finish(
    { project, previous }: Claim,
    setup: Setup,
    result: WorkerSessionResult,
    control: SessionControl,
  ): Promise<SessionJobResult> {
    const { repository, metrics } = this.options;
    const { sessionId } = this;
    const abortReason = control.abortReason;
    const { summary, failed } = summarizeSession(
      {
        sessionId,
        sessionNumber: this.sessionNumber,
        kind: setup.kind,
        interrupted: previous !== null,
        jobId: this.jobId,
        workerId: this.options.workerId,
        model: project.model ?? this.options.defaultModel,
      },
      result,
      abortReason,
    );
    if (control.abandoned) {
      // Another worker may already be running this session again: leave the record alone.
      setup.log.warn({ abortReason, outcome: result.outcome }, 'session abandoned');
      metrics?.sessions.inc({ outcome: 'abandoned' });
      return { ran: true, sessionId, outcome: result.outcome, decision: 'abandon', status: null };
    }
    await repository.recordSessionEnd(this.projectId, summary, {
      failed,
      progress: sessionProgress({ ...result, kind: setup.kind, abortReason }),
    });
    metrics?.sessions.inc({ outcome: result.outcome });
    metrics?.costUsd.inc(result.usage.costUsd);

    const workspaceProblem = setup.prepared.ok ? unpushedCheckpoint(result) : setup.prepared.pause;
    const decision = await this.decide(result, summary, workspaceProblem, control);
    setup.log.info(
      { outcome: result.outcome, reason: result.reason, decision: decision.decision },
      'session finished',
    );
    const status = await this.carryOut(decision);
    await this.announceRelease(result);
    return {
      ran: true,
      sessionId,
      outcome: result.outcome,
      decision: decision.decision.kind,
      status,
    };
  }

  /** Asks the one policy, `decideAfterSession`, with the project as it is after the record. */
  private async decide(
    result: WorkerSessionResult,
    summary: SessionSummary,
    workspaceProblem: string | undefined,
    control: SessionControl,
  ): Promise<{ decision: ChainDecision; after: ProjectRecord }> {
    const after = await this.options.repository.require(this.projectId);
    const decision = decideAfterSession({
      outcome: result.outcome,
      reason: result.reason,
      ...(summary.error !== undefined ? { error: summary.error } : {}),
      stopReason: result.stopReason,
      contextFull: result.contextFull,
      allFeaturesPass: result.allFeaturesPass,
      featuresAfter: result.featuresAfter,
      abortReason: control.abortReason,
      status: after.status,
      counters: after.counters,
      budgets: after.budgets,
      lastError: after.lastError,
      ...(workspaceProblem === undefined ? {} : { workspaceProblem }),
      chainDelayMs: this.options.chainDelayMs,
      retryDelayMs: this.options.retryDelayMs,
      maxConsecutiveFailures: this.options.maxConsecutiveFailures,
    });
    return { decision, after };
  }

  /** Moves the project as decided (and queues the next session); returns its status. */
  private async carryOut({
    decision,
    after,
  }: {
    decision: ChainDecision;
    after: ProjectRecord;
  }): Promise<string | null> {
    const { repository } = this.options;
    if (decision.kind === 'finish') {
      const moved = await repository.transition(this.projectId, decision.status, {
        from: RUNNABLE,
        reason: decision.reason,
        ...(decision.budgetReached ? { budgetReached: true } : {}),
      });
      return moved.ok ? decision.status : moved.current;
    }
    if (decision.kind === 'next') {
      // Queued before the lease is released so a crash right here cannot lose the chain; the
      // next job waits for the lease if it starts first.
      const moved = await repository.transition(this.projectId, 'queued', {
        from: RUNNABLE,
        reason: decision.reason,
      });
      if (moved.ok) {
        await enqueueSession(
          this.options.queue,
          repository,
          {
            projectId: this.projectId,
            sessionNumber: after.counters.sessions + 1,
            reason: decision.jobReason,
          },
          { delayMs: decision.delayMs },
        );
      }
      return moved.ok ? 'queued' : moved.current;
    }
    return after.status;
  }

  private async announceRelease(result: WorkerSessionResult): Promise<void> {
    await this.options.repository.appendEvent(this.projectId, {
      v: 1,
      type: 'session-released',
      at: Date.now(),
      projectId: this.projectId,
      sessionId: this.sessionId,
      sessionNumber: this.sessionNumber,
      jobId: this.jobId,
      workerId: this.options.workerId,
      outcome: result.outcome,
    });
  }

  private async releaseLease(lease: ProjectLease): Promise<void> {
    try {
      await lease.release();
    } catch (error) {
      // It expires on its own after ttlMs.
      this.log.warn({ err: error }, 'could not release project lease');
    }
  }
}
