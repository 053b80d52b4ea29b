/**
 * The reconciler: finds projects that say they are `queued` or `running` while nothing will ever
 * run them (no session job waiting, delayed or active, and no lease), and queues their next
 * session. Such projects are what a Redis fault on the chaining path leaves behind: the status
 * moved to `queued`, then adding the job failed (OOM, READONLY, a cut connection) and BullMQ
 * recorded the failure nowhere a user looks. Run by any one worker's maintenance.
 */
import type { Queue } from 'bullmq';
import { describeError, isProjectError } from './errors.js';
import type { BatonKeys } from './keys.js';
import type { ProjectRecord } from './project.js';
import type { ProjectRepository } from './project-repository.js';
import type { RedisClient } from '@baton/storage-redis';
import { enqueueSession, sessionJobId, type SessionJobData } from './session-queue.js';

/** Options of `reconcileProjects`. */
export interface ReconcileOptions {
  redis: RedisClient;
  keys: BatonKeys;
  repository: ProjectRepository;
  queue: Queue<SessionJobData>;
  /**
   * A project's status must be at least this old (ms) before it counts as stuck, so a project
   * whose job is being added right now (create, then enqueue) is left alone. Default 30 000.
   */
  minAgeMs?: number | undefined;
  /** Clock. Default `Date.now`. */
  now?: (() => number) | undefined;
}

/** What the reconciler did with one stuck project. */
export interface ReconcileAction {
  projectId: string;
  /**
   * `requeued`: its next session's job was added; `deferred`: Redis refused (full, read-only,
   * unreachable), tried again on the next pass; `failed`: it can never be queued (the project
   * itself is broken), and the project's status reason says why.
   */
  action: 'requeued' | 'deferred' | 'failed';
  /** The status it was found in. */
  found: 'queued' | 'running';
  /** The failed job's reason when an earlier job of this session failed, else null. */
  jobFailure: string | null;
  /** Why it was deferred or failed, else null. */
  reason: string | null;
}

const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/** One pass over the `queued` and `running` projects; returns what it did. */
export async function reconcileProjects(options: ReconcileOptions): Promise<ReconcileAction[]> {
  const { redis, keys, repository, queue } = options;
  const now = (options.now ?? Date.now)();
  const minAgeMs = options.minAgeMs ?? 30_000;
  const actions: ReconcileAction[] = [];
  for (const status of ['queued', 'running'] as const) {
    const ids = await redis.zrange(keys.projectIndex('id', status), '0', '-1');
    for (const id of ids) {
      const project = await repository.get(id);
      if (!project || project.status !== status || now - project.statusAt < minAgeMs) continue;
      const stuck = await findStuck(options, project);
      if (stuck === null) continue;
      actions.push(
        await requeue(repository, queue, project, status, stuck.sessionNumber, stuck.jobFailure),
      );
    }
  }
  return actions;
}

/** A project nothing will run: `queued`/`running`, with no live session job and no lease. */
export interface StuckProject {
  /** The session its next job would run. */
  sessionNumber: number;
  /** The failed job's reason when that session's job failed (e.g. `OOM command not allowed ...`), else null. */
  jobFailure: string | null;
  /** One sentence for `baton status` and the dashboard. */
  problem: string;
  /** The one command that fixes it. */
  fix: string;
}

/** Whether `project` is stuck (see `StuckProject`); null when something runs or will run it. */
export async function findStuck(
  options: Pick<ReconcileOptions, 'redis' | 'keys' | 'queue'>,
  project: ProjectRecord,
): Promise<StuckProject | null> {
  const { redis, keys, queue } = options;
  if (project.status !== 'queued' && project.status !== 'running') return null;
  if ((await redis.exists(keys.lease(project.id))) === 1) return null;
  const job = await queue.getJob(sessionJobId(project.id, project.counters.sessions + 1));
  const state = job ? await job.getState() : 'unknown';
  return describeStuck(project, false, {
    state,
    generation: job?.data.generation,
    failedReason: job?.failedReason,
  });
}

/** What is known of a session job: its BullMQ state (`unknown`: none), generation and failure. */
export interface SessionJobState {
  state: string;
  generation: unknown;
  failedReason: string | null | undefined;
}

/**
 * The one rule of "stuck", given what was read: a `queued`/`running` project with no lease whose
 * next session's job is not live (missing, finished, or left over from an earlier project of the
 * same id, which workers refuse). Null when something runs or will run it.
 */
export function describeStuck(
  project: ProjectRecord,
  leased: boolean,
  job: SessionJobState,
): StuckProject | null {
  if (project.status !== 'queued' && project.status !== 'running') return null;
  if (leased) return null;
  if (LIVE_STATES.has(job.state) && job.generation === project.createdAt) return null;
  const sessionNumber = project.counters.sessions + 1;
  const jobFailure = job.state === 'failed' ? (job.failedReason ?? 'failed') : null;
  const problem =
    jobFailure === null
      ? `${project.status} but no session job is waiting and no worker holds it`
      : `${project.status} but the job of session ${sessionNumber} failed: ${jobFailure}`;
  return { sessionNumber, jobFailure, problem, fix: `baton resume ${project.id}` };
}

async function requeue(
  repository: ProjectRepository,
  queue: Queue<SessionJobData>,
  project: ProjectRecord,
  found: 'queued' | 'running',
  sessionNumber: number,
  jobFailure: string | null,
): Promise<ReconcileAction> {
  const why =
    jobFailure === null
      ? `no session job and no lease for ${found === 'running' ? 'its running' : 'its queued'} session`
      : `its session job failed: ${jobFailure}`;
  if (found === 'running') {
    // Its worker is gone (no lease): the next session resumes it as interrupted.
    const moved = await repository.transition(project.id, 'queued', {
      from: ['running'],
      reason: `reconciled: ${why}`,
    });
    if (!moved.ok)
      return { projectId: project.id, action: 'requeued', found, jobFailure, reason: null };
  }
  try {
    await enqueueSession(queue, repository, {
      projectId: project.id,
      sessionNumber,
      reason: 'resume',
      generation: project.createdAt,
    });
    return { projectId: project.id, action: 'requeued', found, jobFailure, reason: null };
  } catch (error) {
    if (!isProjectError(error)) {
      const reason = `could not queue session ${sessionNumber}: ${describeError(error)}`;
      return { projectId: project.id, action: 'deferred', found, jobFailure, reason };
    }
    const reason = `could not queue session ${sessionNumber} (${why}): ${describeError(error)}`;
    await repository.transition(project.id, 'failed', { from: ['queued'], reason });
    return { projectId: project.id, action: 'failed', found, jobFailure, reason };
  }
}
