import { randomUUID } from 'node:crypto';
import { changedChecks, readFeatures, type SessionResult } from '@baton/session';
import { DEFAULT_SANDBOX_SETUP, describeSandbox, openProjectWorkspace } from '@baton/workspace';
import {
  decideAfterSession,
  nextSessionKind,
  sessionProgress,
  uselessContextFill,
} from '../chaining.js';
import { isProjectError } from '../errors.js';
import { RUNNABLE_STATUSES, type ActiveSessionInfo, type ProjectRecord } from '../project.js';
import type { ProjectLog, SessionSummary } from '../project-log.js';
import { carryOutDecision, decisionInput } from './chain-decision.js';
import { bindChainLogger, type ChainLogger } from './chain-logger.js';
import type {
  ChainedSessionOutcome,
  ChainedSessionRequest,
  ChainEvent,
  Claim,
  SessionChainOptions,
  Setup,
} from './chain-types.js';
import { chainSessionOptions } from './session-options.js';
import { notStarted, runGuarded, summarizeSession } from './session-results.js';
import { prepareWorkspace, recordInterruption, unpushedCheckpoint } from './session-workspace.js';

/** A write refused because the session's lease moved on (`ProjectRepository.fenced`). */
function isFenced(error: unknown): boolean {
  return isProjectError(error) && error.code === 'fenced';
}

/** What a step asks of its chain (`SessionChain`). */
export interface StepChain {
  whyNotRunnable(
    project: ProjectRecord | null,
    sessionNumber: number,
    generation?: number | undefined,
  ): string | undefined;
  publish(event: ChainEvent, log?: ProjectLog): Promise<void>;
}

/** One run of the chain for one request: named steps over per-session state. */
export class ChainStep {
  readonly #options: SessionChainOptions;
  readonly #request: ChainedSessionRequest;
  readonly #chain: StepChain;
  readonly #sessionId = randomUUID();
  readonly #log: ChainLogger;
  /** Where this session writes the project: the request's (fenced) log, else the chain's. */
  readonly #projects: ProjectLog;
  /** Replaced sessions' late pushes this session's checkpoints took the branch back from. */
  readonly #replacedStale: NonNullable<SessionSummary['replacedStale']> = [];

  constructor(
    options: SessionChainOptions,
    logger: ChainLogger,
    request: ChainedSessionRequest,
    chain: StepChain,
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
      ? await runGuarded(
          this.#options.runSession,
          chainSessionOptions(claim, setup, {
            options: this.#options,
            request: this.#request,
            sessionId: this.#sessionId,
            budgets: claim.project.budgets,
            publish: (event) => this.#publishSessionEvent(event),
          }),
        )
      : notStarted(this.#sessionId, setup.kind, setup.features, setup.prepared.error);
    this.#request.onSessionReturned?.();
    return this.#finish(claim, setup, result);
  }

  /**
   * A session's event to the log; a checkpoint that took the branch back from a replaced
   * session's late push is also a `warn` line (the worker's JSON log) and goes into the summary
   * (`baton status`), since the user may want what the kept commits hold.
   */
  async #publishSessionEvent(event: ChainEvent): Promise<void> {
    if (event.type === 'checkpoint' && event.replacedStale !== undefined) {
      const replaced = event.replacedStale;
      this.#replacedStale.push(replaced);
      this.#log.warn(
        { replacedStale: replaced },
        `checkpoint took the branch back from a replaced session's late push; its commits are kept on ${replaced.keptOn}`,
      );
    }
    await this.#chain.publish(event, this.#projects);
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
      fence: this.#request.fence,
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
    if (this.#replacedStale.length > 0) summary.replacedStale = [...this.#replacedStale];
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
    const status = await carryOutDecision(this.#projects, this.#request, decision, after);
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
    return decisionInput(result, project, summary, {
      options: this.#options,
      request: this.#request,
      budgets: project.budgets,
    });
  }
}
