import { randomUUID } from 'node:crypto';
import { defineContextConfig } from '@baton/context-config';
import type { MemoryStore } from '@baton/core';
import {
  changedChecks,
  readFeatures,
  type FeatureChecks,
  type RunSessionOptions,
  type SessionEvent,
  type SessionResult,
} from '@baton/session';
import {
  DEFAULT_SANDBOX_SETUP,
  describeSandbox,
  openProjectWorkspace,
  type ProjectWorkspace,
  type PushRetryOptions,
} from '@baton/workspace';
import {
  decideAfterSession,
  nextSessionKind,
  sessionProgress,
  uselessContextFill,
  type AbortReason,
  type ChainDecision,
} from '../chaining.js';
import { isProjectError } from '../errors.js';
import type { WorkerEvent } from '../events.js';
import {
  RUNNABLE_STATUSES,
  type ActiveSessionInfo,
  type ProjectBudgets,
  type ProjectRecord,
  type ProjectStatus,
} from '../project.js';
import type { ProjectLog, SessionSummary } from '../project-log.js';
import type { SessionJobReason } from '../session-queue.js';
import { bindChainLogger, SILENT_CHAIN_LOGGER, type ChainLogger } from './chain-logger.js';
import {
  fallbackModelOption,
  notStarted,
  runGuarded,
  sessionBudgets,
  summarizeSession,
  type SessionRunner,
} from './session-results.js';
import {
  prepareWorkspace,
  recordInterruption,
  unpushedCheckpoint,
  type PrepareOutcome,
} from './session-workspace.js';

/**
 * Why a job queued for an earlier project of the same id is refused: Redis lost that project and
 * a user created it again, so the job's session number means nothing for the new one.
 */
function staleJobReason(project: ProjectRecord, generation: number): string {
  const created = (at: number) =>
    Number.isSafeInteger(at) && at > 0 ? new Date(at).toISOString() : 'at an unknown time';
  return (
    `queued for an earlier project ${project.id} (created ${created(generation)}), not the one ` +
    `created ${created(project.createdAt)}: Redis lost that project; this job never runs a ` +
    'session of the new one'
  );
}

/** A write refused because the session's lease moved on (`ProjectRepository.fenced`). */
function isFenced(error: unknown): boolean {
  return isProjectError(error) && error.code === 'fenced';
}

/** Every event the chain appends to a project's log: the session's own and the chain's. */
export type ChainEvent = SessionEvent | WorkerEvent;

/** Options shared by every session a chain runs (one per worker, one per `baton run`). */
export interface SessionChainOptions {
  /** Where projects are kept: Redis for workers, files under `BATON_HOME` for `baton run`. */
  log: ProjectLog;
  /** Runs one session; default `runSession` from `@baton/session`. */
  runSession: SessionRunner;
  /** Names who ran a session in its summary and events (`baton run`: `local`). */
  workerId: string;
  /** `BATON_HOME`, absolute: the clone of each project lives under it. */
  home: string;
  /** Delay before the next session of a project (ms). */
  chainDelayMs: number;
  /** Delay before retrying after a failed session (ms); doubles with each failure in a row. */
  retryDelayMs: number;
  /** Failed sessions in a row before the project is `failed`. */
  maxConsecutiveFailures: number;
  /** The Messages API client every session uses. */
  client: RunSessionOptions['client'];
  /** Model of projects that name none. */
  defaultModel: string;
  /** Fallback model for projects that name none. Default: none. */
  defaultFallbackModel?: string | undefined;
  /** Retries of checkpoint pushes. Default `@baton/workspace`'s. */
  push?: PushRetryOptions | undefined;
  /** `BATON_MAX_FILE_BYTES`: files larger are left out of checkpoints. Default 50 MiB. */
  maxFileBytes?: number | undefined;
  /** Least time between two checkpoints after turns that changed files (ms). Default the session's. */
  checkpointIntervalMs?: number | undefined;
  /** Sees every event before it is appended (metrics, the terminal). Must not throw. */
  observeEvent?: ((event: ChainEvent) => void) | undefined;
  /** Sees the session's own events only, before `observeEvent` (traces). Must not throw. */
  observeSessionEvent?: ((event: SessionEvent) => void) | undefined;
  /** Default: logs nothing. */
  logger?: ChainLogger | undefined;
}

/** How a running session is told to stop (`SessionControl` implements it). */
export interface ChainControl {
  readonly signal: AbortSignal;
  readonly pauseSignal: AbortSignal;
  readonly abortReason: AbortReason | undefined;
  /** Another process may already run this session again: its record is no longer ours. */
  readonly abandoned: boolean;
}

/** One session to run on one project. */
export interface ChainedSessionRequest {
  projectId: string;
  /** Must be above the project's finished sessions, else the request is skipped. */
  sessionNumber: number;
  /** The queue job behind it (`baton run`: `local-<n>`). */
  jobId: string;
  /**
   * The `createdAt` of the project the job was queued for (`SessionJobData.generation`); the
   * session is refused when the project was created again since. `baton run`: unset.
   */
  generation?: number | undefined;
  control: ChainControl;
  /** The project's memory. */
  memory: (project: ProjectRecord) => MemoryStore | Promise<MemoryStore>;
  /**
   * Where this session writes the project (its start and end, status, checkpoints, events):
   * a worker passes the fenced view of its lease (`ProjectRepository.fenced`), so once the lease
   * moved on every write throws `ProjectError('fenced')` and the session's record is left to the
   * new holder. Default: the chain's `log`.
   */
  log?: ProjectLog | undefined;
  /** Options laid over the chain's `runSession` options (client, tools, transcripts, guidance, context). */
  sessionOptions?: ((project: ProjectRecord) => Partial<RunSessionOptions>) | undefined;
  /**
   * The budgets the rules check, instead of the project's stored ones (`baton run --budget-usd`
   * is a budget of one run, never stored).
   */
  budgets?: ((project: ProjectRecord) => ProjectBudgets) | undefined;
  /**
   * Asked right before every checkpoint push; a reason refuses it (the commit stays in this
   * worker's clone). A worker refuses once its lease moved on, so a replaced session never pushes
   * over the new holder's work. Default: every push goes.
   */
  mayPush?: (() => Promise<string | undefined>) | undefined;
  /** Called once the project is claimed (cancel requests can reach the session from now on). */
  onClaimed?: ((sessionId: string) => void) | undefined;
  /** Called when a crashed predecessor is found. */
  onInterrupted?: ((previous: ActiveSessionInfo) => void) | undefined;
  /** Called when the session returned, before anything is recorded (stop renewing leases). */
  onSessionReturned?: (() => void) | undefined;
  /**
   * Queues the next session after a `next` decision; the project is already `queued`. `baton
   * run` leaves it unset and runs the next one itself.
   */
  queueNext?:
    | ((next: {
        sessionNumber: number;
        delayMs: number;
        reason: SessionJobReason;
      }) => Promise<void>)
    | undefined;
}

/** What one step of the chain did. */
export type ChainedSessionOutcome =
  | { ran: false; skipped: string }
  | {
      ran: true;
      sessionId: string;
      result: SessionResult;
      decision: ChainDecision;
      /** The project's status after the decision was carried out (`null`: left as it was). */
      status: ProjectStatus | null;
    };

/** What a claimed session runs on. */
interface Claim {
  project: ProjectRecord;
  /** The session that held the project before and never finished (its process stopped). */
  previous: ActiveSessionInfo | null;
  extraOptions: Partial<RunSessionOptions>;
}

interface Setup {
  store: MemoryStore;
  workspace: ProjectWorkspace;
  prepared: PrepareOutcome;
  features: Awaited<ReturnType<typeof readFeatures>>;
  kind: SessionResult['kind'];
  /** The project's check record before this session (`verification.previous`). */
  checks: FeatureChecks;
}

/**
 * The one session chain: check the project still wants this session, claim it, prepare memory
 * and workspace, run the session, record it, and carry out what `decideAfterSession` says. A
 * worker's job wraps one step in its lease; `baton run` loops over steps. Both get the same
 * events, records and stop rules because both run this code.
 */
export class SessionChain {
  readonly #options: SessionChainOptions;
  readonly #logger: ChainLogger;

  constructor(options: SessionChainOptions) {
    this.#options = options;
    this.#logger = options.logger ?? SILENT_CHAIN_LOGGER;
  }

  /**
   * Why `sessionNumber` must not run now on `project`, if it must not. With `generation` (a
   * queued job's), a project created again under the same id since the job was queued is not
   * the job's project: the job must never run a session of it.
   */
  whyNotRunnable(
    project: ProjectRecord | null,
    sessionNumber: number,
    generation?: number | undefined,
  ): string | undefined {
    if (!project) return 'project does not exist';
    if (generation !== undefined && generation !== project.createdAt) {
      return staleJobReason(project, generation);
    }
    if (!(RUNNABLE_STATUSES as readonly string[]).includes(project.status)) {
      return `project is ${project.status}`;
    }
    if (sessionNumber <= project.counters.sessions) return `session ${sessionNumber} already ran`;
    return undefined;
  }

  /** Runs one session of the chain, from the claim to the decision carried out. */
  async runOne(request: ChainedSessionRequest): Promise<ChainedSessionOutcome> {
    const step = new ChainStep(this.#options, this.#logger, request, this);
    return step.run();
  }

  /** Appends an event to the project's log (default the chain's) after observers saw it. Never throws. */
  async publish(event: ChainEvent, log: ProjectLog = this.#options.log): Promise<void> {
    this.#options.observeEvent?.(event);
    try {
      if (event.type === 'checkpoint' && event.pushed && event.head !== null) {
        // Acknowledged: the next session, in whichever process, starts from this commit.
        await log.setLastCheckpoint(event.projectId, event.head);
      }
      await log.appendEvent(event.projectId, event);
    } catch (error) {
      // Events are for observers; a failed append must not fail the session.
      this.#logger.warn(
        { projectId: event.projectId, type: event.type, err: error },
        'could not publish event',
      );
    }
  }
}

/** One run of the chain for one request: named steps over per-session state. */
class ChainStep {
  readonly #options: SessionChainOptions;
  readonly #request: ChainedSessionRequest;
  readonly #chain: SessionChain;
  readonly #sessionId = randomUUID();
  readonly #log: ChainLogger;
  /** Where this session writes the project: the request's (fenced) log, else the chain's. */
  readonly #projects: ProjectLog;

  constructor(
    options: SessionChainOptions,
    logger: ChainLogger,
    request: ChainedSessionRequest,
    chain: SessionChain,
  ) {
    this.#options = options;
    this.#request = request;
    this.#chain = chain;
    this.#projects = request.log ?? options.log;
    this.#log = bindChainLogger(logger, {
      projectId: request.projectId,
      jobId: request.jobId,
      sessionNumber: request.sessionNumber,
    });
  }

  async run(): Promise<ChainedSessionOutcome> {
    const claim = await this.#claim();
    if (typeof claim === 'string') return { ran: false, skipped: claim };
    this.#request.onClaimed?.(this.#sessionId);
    const setup = await this.#setUp(claim);
    const result = setup.prepared.ok
      ? await runGuarded(this.#options.runSession, this.#sessionOptions(claim, setup))
      : notStarted(this.#sessionId, setup.kind, setup.features, setup.prepared.error);
    this.#request.onSessionReturned?.();
    return this.#finish(claim, setup, result);
  }

  /**
   * Marks the project as running this session, noting an interrupted predecessor. Returns why
   * not when the project changed meanwhile (another process finished this session).
   */
  async #claim(): Promise<Claim | string> {
    const { workerId } = this.#options;
    const log = this.#projects;
    const { projectId, sessionNumber, jobId, generation } = this.#request;
    const sessionId = this.#sessionId;
    const project = await log.get(projectId);
    const unwanted = this.#chain.whyNotRunnable(project, sessionNumber, generation);
    if (unwanted !== undefined || !project) return unwanted ?? 'project does not exist';

    const previous = project.activeSession;
    if (previous) await this.#reportInterrupted(previous);
    const extraOptions = this.#request.sessionOptions?.(project) ?? {};
    try {
      const moved = await log.transition(projectId, 'running', {
        from: RUNNABLE_STATUSES,
        reason: `session ${sessionNumber}`,
      });
      if (!moved.ok) return `project is ${moved.current ?? 'gone'}`;
      await log.markSessionStart(
        projectId,
        { sessionId, sessionNumber, jobId, workerId, startedAt: Date.now() },
        previous !== null,
        describeSandbox(extraOptions.tools?.sandbox ?? DEFAULT_SANDBOX_SETUP),
      );
    } catch (error) {
      if (isFenced(error)) return 'fenced out: a newer session holds the project';
      throw error;
    }
    await this.#chain.publish(
      {
        v: 1,
        type: 'session-claimed',
        at: Date.now(),
        projectId,
        sessionId,
        sessionNumber,
        jobId,
        workerId,
        interrupted: previous !== null,
      },
      this.#projects,
    );
    return { project, previous, extraOptions };
  }

  async #reportInterrupted(previous: ActiveSessionInfo): Promise<void> {
    this.#request.onInterrupted?.(previous);
    this.#log.warn({ previous }, 'previous session was interrupted; resuming');
    await this.#chain.publish(
      {
        v: 1,
        type: 'session-interrupted',
        at: Date.now(),
        projectId: this.#request.projectId,
        sessionId: previous.sessionId,
        sessionNumber: previous.sessionNumber,
        jobId: previous.jobId,
        workerId: previous.workerId,
      },
      this.#projects,
    );
  }

  /** Opens the project's memory, brings the workspace to the last checkpoint, picks the session kind. */
  async #setUp({ project, previous, extraOptions }: Claim): Promise<Setup> {
    const { projectId, sessionNumber, jobId } = this.#request;
    const sessionId = this.#sessionId;
    const store = await this.#request.memory(project);
    const workspace = openProjectWorkspace({
      home: this.#options.home,
      projectId,
      repo: project.repo,
      baseCommit: project.baseCommit,
      skipHooks: project.skipHooks,
      dir: project.workspace ?? undefined,
      adopt: project.adoptWorkspace,
      push: this.#options.push,
      maxFileBytes: this.#options.maxFileBytes,
      mayPush: this.#request.mayPush,
      // Commit hooks run in the same sandbox as the session's commands.
      hookSandbox: extraOptions.tools?.sandbox,
    });
    const prepared = await prepareWorkspace(workspace, project.lastCheckpoint);
    if (prepared.ok) {
      await this.#chain.publish(
        {
          v: 1,
          type: 'workspace-prepared',
          at: Date.now(),
          projectId,
          sessionId,
          sessionNumber,
          jobId,
          workerId: this.#options.workerId,
          ...prepared.workspace,
        },
        this.#projects,
      );
    }
    const checkpoint = prepared.ok ? prepared.workspace.head : null;
    if (previous) {
      await recordInterruption(store, previous, {
        sessionNumber,
        sessionId,
        branch: workspace.branch,
        checkpoint,
        log: this.#log,
      });
    }
    const features = await readFeatures(store);
    const kind = nextSessionKind(features);
    const checks = await this.#options.log.readChecks(projectId);
    this.#log.info(
      { sessionId, kind, interrupted: previous !== null, checkpoint },
      prepared.ok ? 'session started' : 'workspace not ready; session not started',
    );
    return { store, workspace, prepared, features, kind, checks };
  }

  #budgets(project: ProjectRecord): ProjectBudgets {
    return this.#request.budgets?.(project) ?? project.budgets;
  }

  #sessionOptions(
    { project, previous, extraOptions }: Claim,
    { store, workspace, kind, checks }: Setup,
  ): RunSessionOptions {
    const { control } = this.#request;
    const verification = extraOptions.verification;
    return {
      context: defineContextConfig(project.context),
      // Memory stores are created with the tool's limits and enforce them atomically.
      memoryQuotaEnforcement: 'store',
      ...extraOptions,
      model: project.model ?? this.#options.defaultModel,
      ...fallbackModelOption(project, this.#options.defaultFallbackModel),
      project: { id: project.id, goal: project.goal },
      // The project's own MCP servers over the worker's (and the repository's .mcp.json).
      mcp: { ...extraOptions.mcp, project: project.mcp },
      client: this.#options.client,
      kind,
      store,
      workspace: workspace.dir,
      checkpoints: {
        target: workspace,
        intervalMs: this.#options.checkpointIntervalMs,
      },
      budgets: sessionBudgets({ ...project, budgets: this.#budgets(project) }),
      signal: control.signal,
      pauseSignal: control.pauseSignal,
      sessionId: this.#sessionId,
      sessionNumber: this.#request.sessionNumber,
      interrupted: previous !== null,
      // Shown in the resume orientation: which commit the branch was last saved at.
      lastCheckpoint: project.lastCheckpoint,
      // Carried between sessions, so a session re-runs only the checks not yet verified on its
      // final commit (least recently verified first), not every passing check.
      verification:
        verification === false
          ? false
          : {
              defaultCheck: project.verification?.check,
              requireChecks: project.verification?.requireChecks,
              checkTimeoutMs: secondsToMs(project.verification?.checkTimeoutSeconds),
              regressionBudgetMs: secondsToMs(project.verification?.regressionBudgetSeconds),
              ...verification,
              previous: checks,
            },
      onEvent: (event) => {
        this.#options.observeSessionEvent?.(event);
        return this.#chain.publish(event, this.#projects);
      },
    };
  }

  /** Records the session on the project and carries out what happens next. */
  async #finish(claim: Claim, setup: Setup, result: SessionResult): Promise<ChainedSessionOutcome> {
    if (this.#request.control.abandoned) return this.#abandon(claim, result);
    try {
      return await this.#record(claim, setup, result);
    } catch (error) {
      // The lease moved on while this session ended: its record belongs to the new holder.
      if (isFenced(error)) return this.#abandon(claim, result);
      throw error;
    }
  }

  /** Another process may already be running this session again: leave the record alone. */
  #abandon(claim: Claim, result: SessionResult): ChainedSessionOutcome {
    const abortReason = this.#request.control.abortReason ?? 'lease_lost';
    this.#log.warn({ abortReason, outcome: result.outcome }, 'session abandoned');
    const decision = decideAfterSession({
      ...this.#chainInput(result, claim.project, undefined),
      abortReason,
    });
    return { ran: true, sessionId: this.#sessionId, result, decision, status: null };
  }

  /** Stores the session's summary, decides what happens next and carries it out. */
  async #record(claim: Claim, setup: Setup, result: SessionResult): Promise<ChainedSessionOutcome> {
    const log = this.#projects;
    const { control, projectId } = this.#request;
    const sessionId = this.#sessionId;
    const abortReason = control.abortReason;
    const { summary, failed } = summarizeSession(
      {
        sessionId,
        sessionNumber: this.#request.sessionNumber,
        kind: setup.kind,
        interrupted: claim.previous !== null,
        jobId: this.#request.jobId,
        workerId: this.#options.workerId,
        model: claim.project.model ?? this.#options.defaultModel,
      },
      result,
      abortReason,
    );
    await log.recordSessionEnd(projectId, summary, {
      failed,
      progress: sessionProgress({ ...result, kind: setup.kind, abortReason }),
      uselessContextFill: uselessContextFill({ contextFull: result.contextFull, abortReason }),
      checks: changedChecks(setup.checks, result.checks ?? {}),
    });
    const workspaceProblem = setup.prepared.ok ? unpushedCheckpoint(result) : setup.prepared.pause;
    const after = await log.require(projectId);
    const decision = decideAfterSession({
      ...this.#chainInput(result, after, summary),
      workspaceProblem,
    });
    this.#log.info(
      { sessionId, outcome: result.outcome, reason: result.reason, decision },
      'session finished',
    );
    const status = await this.#carryOut(decision, after);
    await this.#chain.publish(
      {
        v: 1,
        type: 'session-released',
        at: Date.now(),
        projectId,
        sessionId,
        sessionNumber: this.#request.sessionNumber,
        jobId: this.#request.jobId,
        workerId: this.#options.workerId,
        outcome: result.outcome,
      },
      this.#projects,
    );
    return { ran: true, sessionId, result, decision, status };
  }

  #chainInput(
    result: SessionResult,
    project: ProjectRecord,
    summary: SessionSummary | undefined,
  ): Parameters<typeof decideAfterSession>[0] {
    return {
      outcome: result.outcome,
      reason: result.reason,
      error: summary?.error,
      stopReason: result.stopReason,
      contextFull: result.contextFull,
      allFeaturesPass: result.allFeaturesPass,
      checksPending: result.verification?.pending,
      featuresAfter: result.featuresAfter,
      abortReason: this.#request.control.abortReason,
      status: project.status,
      counters: project.counters,
      budgets: this.#budgets(project),
      lastError: project.lastError,
      chainDelayMs: this.#options.chainDelayMs,
      retryDelayMs: this.#options.retryDelayMs,
      maxConsecutiveFailures: this.#options.maxConsecutiveFailures,
    };
  }

  /** Moves the project as decided (and queues the next session); returns its status. */
  async #carryOut(decision: ChainDecision, after: ProjectRecord): Promise<ProjectStatus | null> {
    const log = this.#projects;
    const { projectId } = this.#request;
    if (decision.kind === 'finish') {
      const moved = await log.transition(projectId, decision.status, {
        from: RUNNABLE_STATUSES,
        reason: decision.reason,
        budgetReached: decision.budgetReached,
      });
      return moved.ok ? decision.status : moved.current;
    }
    if (decision.kind === 'next') {
      // Queued before the caller lets go of the project, so a crash right here cannot lose the
      // chain; a next job waits for the lease if it starts first.
      const moved = await log.transition(projectId, 'queued', {
        from: RUNNABLE_STATUSES,
        reason: decision.reason,
      });
      if (moved.ok) {
        await this.#request.queueNext?.({
          sessionNumber: after.counters.sessions + 1,
          delayMs: decision.delayMs,
          reason: decision.jobReason,
        });
      }
      return moved.ok ? 'queued' : moved.current;
    }
    return after.status;
  }
}

/** A chain over `options`. */
export function createSessionChain(options: SessionChainOptions): SessionChain {
  return new SessionChain(options);
}

/** A project's verification seconds as the session's milliseconds (`undefined`: the default). */
function secondsToMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1_000;
}
