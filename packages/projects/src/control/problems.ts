/**
 * What `baton status` and the dashboard's projects page list below the projects: projects nothing
 * runs (`stuck`), and what is left of projects Redis lost (`fragment`, `orphan-job`), each with
 * the one command that fixes it.
 *
 * Cost: a fixed number of round trips per 500 projects, never a few per project. The `queued` and
 * `running` indexes are read in one pipeline, each batch's records and leases in one, the state of
 * their next session jobs in one (the reads BullMQ's `getState` script makes), and the session
 * jobs of projects Redis no longer has from BullMQ's sets. Fragments no job names are found by a
 * bounded SCAN of the project hashes under the prefix (`COUNT` per call, at most `maxScanKeys`
 * keys examined); when the bound stops it, `incomplete` says so.
 */
import type { Queue } from 'bullmq';
import { isCluster, type RedisClient } from '@baton/storage-redis';
import { execPipeline } from '../internal/pipeline.js';
import type { BatonKeys } from '../keys.js';
import { isValidProjectId, type ProjectRecord } from '../project.js';
import { describeStuck, type SessionJobState } from '../reconcile.js';
import { parseProjectHash } from '../repository/project-hash.js';
import { sessionJobId, type SessionJobData } from '../session-queue.js';

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

/** Every problem found, and whether the search looked everywhere. */
export interface ProjectProblems {
  problems: ProjectProblem[];
  /**
   * One sentence when a bound stopped the search (keys scanned, session jobs read): what was not
   * looked at and how to find a given project anyway. Null when nothing was left out.
   */
  incomplete: string | null;
}

export interface FindProblemsOptions {
  redis: RedisClient;
  keys: BatonKeys;
  queue: Queue<SessionJobData>;
  /** Session jobs read per state when looking for jobs of projects Redis lost. Default 1000. */
  maxJobs?: number | undefined;
  /** SCAN's `COUNT` hint per call. Default 1000. */
  scanCount?: number | undefined;
  /** Keys examined by SCAN at most (per Redis node) before the scan stops. Default 100 000. */
  maxScanKeys?: number | undefined;
}

/** Projects read per pipeline. */
const BATCH = 500;

/** Session job states looked at for projects Redis no longer has. */
const ORPHAN_JOB_STATES = ['waiting', 'delayed', 'active', 'prioritized', 'failed'] as const;

/** Every stuck project, every job of a project Redis lost, and every record fragment. */
export async function findProjectProblems(options: FindProblemsOptions): Promise<ProjectProblems> {
  const problems = await findStuckProjects(options);
  const jobs = await jobsOfUnknownProjects(options);
  const scan = await scanProjectHashes(options);
  const incomplete = [jobs.incomplete, scan.incomplete].filter((text) => text !== null);
  const named = new Set(jobs.byProject.keys());
  const unindexed = await notInProjectSet(
    options,
    scan.ids.filter((id) => !named.has(id)),
  );
  const candidates = [...named, ...unindexed];
  const fields = await recordFields(options, candidates);
  for (const [index, id] of candidates.entries()) {
    const found = fields[index] ?? [];
    if (found.includes('id') && found.includes('config')) continue;
    const jobId = jobs.byProject.get(id);
    if (found.length > 0) {
      problems.push({
        projectId: id,
        kind: 'fragment',
        problem: `only fragments of its record are left (${found.sort().join(', ')}), written after Redis lost its data; nothing runs it`,
        fix: `baton enqueue --project ${id} ... creates it again in their place (its memory and branch are kept)`,
      });
    } else if (jobId !== undefined) {
      problems.push({
        projectId: id,
        kind: 'orphan-job',
        problem: `a session job (${jobId}) names project ${id}, which Redis no longer has (Redis lost its data); its code is on branch baton/${id}`,
        fix: `baton enqueue --project ${id} --repo <repo> ... creates it again`,
      });
    }
  }
  return { problems, incomplete: incomplete.length === 0 ? null : incomplete.join('; ') };
}

/** The stuck projects of the `queued` and `running` indexes. */
async function findStuckProjects(options: FindProblemsOptions): Promise<ProjectProblem[]> {
  const { redis, keys } = options;
  const indexes = (await execPipeline(
    redis
      .pipeline()
      .zrange(keys.projectIndex('id', 'queued'), '0', '-1')
      .zrange(keys.projectIndex('id', 'running'), '0', '-1'),
  )) as string[][];
  const ids = [...new Set(indexes.flat())];
  const problems: ProjectProblem[] = [];
  for (let start = 0; start < ids.length; start += BATCH) {
    const read = redis.pipeline();
    const batch = ids.slice(start, start + BATCH);
    for (const id of batch) read.hgetall(keys.project(id)).exists(keys.lease(id));
    const replies = await execPipeline(read);
    // Only an unleased project can be stuck: its next job's state is read for those alone.
    const unleased: ProjectRecord[] = [];
    for (const index of batch.keys()) {
      const project = parseProjectHash(replies[index * 2] as Record<string, string>);
      if (project !== null && replies[index * 2 + 1] === 0) unleased.push(project);
    }
    const jobs = await readJobStates(
      options,
      unleased.map((project) => sessionJobId(project.id, project.counters.sessions + 1)),
    );
    for (const [index, project] of unleased.entries()) {
      const stuck = describeStuck(project, false, jobs[index] ?? UNKNOWN_JOB);
      if (stuck !== null) {
        problems.push({
          projectId: project.id,
          kind: 'stuck',
          problem: stuck.problem,
          fix: stuck.fix,
        });
      }
    }
  }
  return problems;
}

const UNKNOWN_JOB: SessionJobState = {
  state: 'unknown',
  generation: undefined,
  failedReason: null,
};

/**
 * The state of each job in one pipeline: the membership tests of BullMQ's `getState` script, in
 * its order, and the job's data and failure.
 */
async function readJobStates(
  options: FindProblemsOptions,
  jobIds: readonly string[],
): Promise<SessionJobState[]> {
  if (jobIds.length === 0) return [];
  const queueKeys = options.queue.keys;
  const tests: ReadonlyArray<readonly [state: string, list: boolean, key: string]> = [
    ['completed', false, queueKeys.completed ?? ''],
    ['failed', false, queueKeys.failed ?? ''],
    ['delayed', false, queueKeys.delayed ?? ''],
    ['prioritized', false, queueKeys.prioritized ?? ''],
    ['active', true, queueKeys.active ?? ''],
    ['waiting', true, queueKeys.wait ?? ''],
    ['waiting', true, queueKeys.paused ?? ''],
    ['waiting-children', false, queueKeys['waiting-children'] ?? ''],
  ];
  const read = options.redis.pipeline();
  for (const jobId of jobIds) {
    for (const [, list, key] of tests) {
      if (list) read.lpos(key, jobId);
      else read.zscore(key, jobId);
    }
    read.hmget(options.queue.toKey(jobId), 'data', 'failedReason');
  }
  const replies = await execPipeline(read);
  const width = tests.length + 1;
  return jobIds.map((_, index) => {
    const at = index * width;
    const test = tests.findIndex((_test, offset) => {
      const reply = replies[at + offset];
      return reply !== null && reply !== undefined;
    });
    const [data, failedReason] = replies[at + tests.length] as [string | null, string | null];
    return {
      state: tests[test]?.[0] ?? 'unknown',
      generation: parseGeneration(data),
      failedReason,
    };
  });
}

function parseGeneration(data: string | null): unknown {
  try {
    return (JSON.parse(data ?? '{}') as Partial<SessionJobData>).generation;
  } catch {
    return undefined;
  }
}

/** The first session job (its id) of each project id a live or failed job names. */
async function jobsOfUnknownProjects(
  options: FindProblemsOptions,
): Promise<{ byProject: Map<string, string>; incomplete: string | null }> {
  const { queue } = options;
  const maxJobs = options.maxJobs ?? 1000;
  const counts = await queue.getJobCounts(...ORPHAN_JOB_STATES);
  const jobs = await queue.getJobs([...ORPHAN_JOB_STATES], 0, maxJobs - 1);
  const byProject = new Map<string, string>();
  for (const job of jobs) {
    const id = (job?.data as Partial<SessionJobData> | undefined)?.projectId;
    if (typeof id === 'string' && !byProject.has(id)) byProject.set(id, job.id ?? '');
  }
  const over = ORPHAN_JOB_STATES.filter((state) => (counts[state] ?? 0) > maxJobs);
  return {
    byProject,
    incomplete:
      over.length === 0
        ? null
        : `only the first ${maxJobs} ${over.join(', ')} session jobs were read`,
  };
}

/** The project ids whose record hash exists under the prefix, by a bounded SCAN. */
async function scanProjectHashes(
  options: FindProblemsOptions,
): Promise<{ ids: string[]; incomplete: string | null }> {
  const { redis, keys } = options;
  const count = options.scanCount ?? 1000;
  const maxKeys = options.maxScanKeys ?? 100_000;
  const base = keys.project('');
  const pattern = `${base.replace(/[*?[\]\\]/gu, '\\$&')}*`;
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
  const ids: string[] = [];
  let capped = false;
  for (const node of nodes) {
    let cursor = '0';
    let examined = 0;
    do {
      const [next, found] = await node.scan(
        cursor,
        'MATCH',
        pattern,
        'COUNT',
        count,
        'TYPE',
        'hash',
      );
      cursor = next;
      examined += count;
      for (const key of found) {
        const id = key.slice(base.length);
        // A project's other hashes (`<id>:checks`, ...) have a `:` no project id has.
        if (isValidProjectId(id)) ids.push(id);
      }
      if (cursor !== '0' && examined >= maxKeys) {
        capped = true;
        break;
      }
    } while (cursor !== '0');
  }
  return {
    ids: [...new Set(ids)],
    incomplete: capped
      ? `the scan for record fragments stopped after about ${maxKeys} keys, so a fragment no session job names may be missing here (\`baton status ID\` finds any one)`
      : null,
  };
}

/** The field names of each id's record hash (empty: no hash), one pipeline per batch. */
async function recordFields(
  options: FindProblemsOptions,
  ids: readonly string[],
): Promise<string[][]> {
  const fields: string[][] = [];
  for (let start = 0; start < ids.length; start += BATCH) {
    const read = options.redis.pipeline();
    for (const id of ids.slice(start, start + BATCH)) read.hkeys(options.keys.project(id));
    fields.push(...((await execPipeline(read)) as string[][]));
  }
  return fields;
}

/**
 * The ids the set of every project does not hold: what the scan found is checked field by field
 * only for those (a real project is in the set from its creation script on).
 */
async function notInProjectSet(
  options: FindProblemsOptions,
  ids: readonly string[],
): Promise<string[]> {
  const left: string[] = [];
  for (let start = 0; start < ids.length; start += BATCH) {
    const batch = ids.slice(start, start + BATCH);
    const scores = await options.redis.zmscore(options.keys.projects, ...batch);
    left.push(...batch.filter((_, index) => scores[index] === null));
  }
  return left;
}
