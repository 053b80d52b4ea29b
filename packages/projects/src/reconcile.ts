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
  const sessionNumber = project.counters.sessions + 1;
  const job = await queue.getJob(sessionJobId(project.id, sessionNumber));
  const state = job ? await job.getState() : 'missing';
  // A waiting job left over from an earlier project of this id is refused by workers: not live.
  if (LIVE_STATES.has(state) && job?.data.generation === project.createdAt) return null;
  const jobFailure = state === 'failed' ? (job?.failedReason ?? 'failed') : null;
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

/**
 * A project nothing will run, or what is left of one Redis lost: one line for `baton status`
 * and the dashboard's projects page, with the one command that fixes it.
 */
export interface ProjectProblem {
  projectId: string;
  /**
   * `stuck`: `queued`/`running` with no live session job and no lease (`findStuck`); `fragment`:
   * only fragments of its record are left (a write after Redis lost its data); `orphan-job`: a
   * session job of a project Redis no longer has.
   */
  kind: 'stuck' | 'fragment' | 'orphan-job';
  /** One sentence. */
  problem: string;
  /** The one command that fixes it. */
  fix: string;
}

/** Session jobs looked at for projects Redis no longer has. */
const ORPHAN_JOB_STATES = ['waiting', 'delayed', 'active', 'prioritized', 'failed'] as const;

/**
 * Every stuck project (`queued` or `running`, nothing runs it) and every project id a session
 * job names that has no project record (a fragment of one, or nothing at all). Reads the
 * `queued` and `running` indexes and at most `maxJobs` session jobs: never the keyspace, so a
 * fragment with no job left is found only by `baton status ID`.
 */
export async function findProjectProblems(
  options: Pick<ReconcileOptions, 'redis' | 'keys' | 'queue' | 'repository'> & {
    /** Session jobs read at most. Default 1000. */
    maxJobs?: number | undefined;
  },
): Promise<ProjectProblem[]> {
  const { redis, keys, queue, repository } = options;
  const problems: ProjectProblem[] = [];
  for (const status of ['queued', 'running'] as const) {
    const ids = await redis.zrange(keys.projectIndex('id', status), '0', '-1');
    for (const id of ids) {
      const project = await repository.get(id);
      const stuck = project === null ? null : await findStuck(options, project);
      if (stuck !== null) {
        problems.push({ projectId: id, kind: 'stuck', problem: stuck.problem, fix: stuck.fix });
      }
    }
  }
  const jobs = await queue.getJobs([...ORPHAN_JOB_STATES], 0, (options.maxJobs ?? 1000) - 1);
  const seen = new Set<string>();
  for (const job of jobs) {
    const id = job?.data?.projectId;
    if (typeof id !== 'string' || seen.has(id)) continue;
    seen.add(id);
    if ((await repository.get(id)) !== null) continue;
    const fragment = await repository.fragment(id);
    problems.push(
      fragment === null
        ? {
            projectId: id,
            kind: 'orphan-job',
            problem: `a session job (${job.id}) names project ${id}, which Redis no longer has (Redis lost its data); its code is on branch baton/${id}`,
            fix: `baton enqueue --project ${id} --repo <repo> ... creates it again`,
          }
        : {
            projectId: id,
            kind: 'fragment',
            problem: `only fragments of its record are left (${fragment.join(', ')}), written after Redis lost its data; nothing runs it`,
            fix: `baton enqueue --project ${id} ... creates it again in their place (its memory and branch are kept)`,
          },
    );
  }
  return problems;
}
