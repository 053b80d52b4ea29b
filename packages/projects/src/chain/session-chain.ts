import { RUNNABLE_STATUSES, type ProjectRecord } from '../project.js';
import type { ProjectLog } from '../project-log.js';
import { SILENT_CHAIN_LOGGER, type ChainLogger } from './chain-logger.js';
import { ChainStep } from './chain-step.js';
import type {
  ChainedSessionOutcome,
  ChainedSessionRequest,
  ChainEvent,
  SessionChainOptions,
} from './chain-types.js';

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
   * Why a queued job of `generation` is not a job of `project`, if it is not: the project was
   * created again under the same id since the job was queued. Such a job must never run a
   * session of it. The one stale-job check: `whyNotRunnable` asks it first, and a worker asks it
   * to tell a refused job (not this project's) from a skipped one (not wanted now).
   */
  whyStale(project: ProjectRecord | null, generation: number): string | undefined {
    return project !== null && generation !== project.createdAt
      ? staleJobReason(project, generation)
      : undefined;
  }

  /**
   * Why `sessionNumber` must not run now on `project`, if it must not. With `generation` (a
   * queued job's), a job of an earlier project of the same id is refused first (`whyStale`).
   */
  whyNotRunnable(
    project: ProjectRecord | null,
    sessionNumber: number,
    generation?: number | undefined,
  ): string | undefined {
    if (!project) return 'project does not exist';
    const stale = generation === undefined ? undefined : this.whyStale(project, generation);
    if (stale !== undefined) return stale;
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

/** A chain over `options`. */
export function createSessionChain(options: SessionChainOptions): SessionChain {
  return new SessionChain(options);
}
