/**
 * The run-once upgrades of the data Baton keeps in Redis, in the order they run (BullMQ's
 * `migrations.ts` shape). Readers assume the current shape: what an earlier version stored is
 * upgraded here once, at `baton up` and worker start (`runRedisMigrations`), never interpreted on
 * every read. An id is never renamed or reused once released: it is what Redis remembers, and a
 * Redis holding an id this version does not list was upgraded by a newer Baton.
 */
import { moveContentToBodies } from '@baton/storage-redis';
import { projectBranch } from '@baton/workspace';
import { execPipeline, scriptPipeline } from '../internal/pipeline.js';
import { scripts } from '../internal/scripts.js';
import type { BatonKeys } from '../keys.js';
import { moveMemoryToDeploymentPrefix } from './memory-prefix.js';
import type { SessionSummary } from '../project-log.js';
import type { RedisClient } from '@baton/storage-redis';
import { searchText } from '../repository/project-hash.js';
import { createSessionQueue } from '../session-queue.js';
import { completeRedisEventDefaults } from './event-defaults.js';
import { completeRedisEvents } from './event-fields.js';
import { completeRedisSessionSummaries, completeRedisSummaryCommits } from './session-summaries.js';
import type { FeatureFlip } from '../repository/session-log.js';

/** What a migration runs against. */
export interface MigrationContext {
  redis: RedisClient;
  keys: BatonKeys;
  /**
   * Where every earlier version kept memory, whatever the deployment's prefix: storage-redis's
   * `DEFAULT_KEY_PREFIX` (`baton`). This deployment's own is `keys.memoryPrefix`.
   */
  legacyMemoryPrefix: string;
  /** Says what a migration left undone and why, in one line naming the projects: never silent. */
  report(message: string, projects: readonly string[]): void;
  /** Throws when this runner lost the migration lock (another may be migrating now). */
  checkLock(): void;
  /**
   * This runner's token in `keys.migrationLock`: a script that rewrites data takes the lock key
   * and it, and refuses (`SCRIPT_STATUS.fenced`) when the lock holds another.
   */
  lockToken: string;
}

export interface RedisMigration {
  /** Never renamed once released: it is what Redis remembers (`keys.migrations`). */
  id: string;
  description: string;
  /** Idempotent: a run cut short is run again whole by the next start. */
  run(context: MigrationContext): Promise<void>;
}

/** Projects read per round trip. */
const BATCH = 200;

export const REDIS_MIGRATIONS: readonly RedisMigration[] = [
  {
    id: '2026-12-04-project-index',
    description:
      'projects stored before the paged index existed join it (was: folded in by the first page read)',
    run: indexProjects,
  },
  {
    id: '2026-12-04-feature-flips',
    description:
      'the feature-flip hash holds the flips of summaries stored before it existed (was: folded in by the first checklist read)',
    run: foldFeatureFlips,
  },
  {
    id: '2026-12-04-project-context',
    description:
      'every project config holds its context config; projects stored before it was kept ran their preset alone (was: a default on every read)',
    run: storeProjectContexts,
  },
  {
    id: '2026-12-04-memory-bodies',
    description:
      'memory files written before bodies had keys of their own move their content to a body (was: moved by the first script that touched them)',
    // Where earlier versions wrote those files; the memory-prefix migration moves them after.
    run: (context) =>
      moveContentToBodies({ redis: context.redis, prefix: context.legacyMemoryPrefix }).then(
        () => undefined,
      ),
  },
  {
    id: '2026-12-04-session-job-generation',
    description:
      "session jobs queued before jobs named their project's generation get it, so workers can refuse jobs of a project Redis lost (was: none; such a job ran as a session of any project created again under its id)",
    run: stampJobGenerations,
  },
  {
    id: '2026-12-04-project-config-defaults',
    description:
      'every project config holds every field a project is created with; fields added after a project was stored get what their absence meant (was: defaults on every read: workspace null, preset coding, no repo, its own branch, hooks on, no adoption)',
    run: storeProjectConfigDefaults,
  },
  {
    id: '2026-12-04-session-summary-fields',
    description:
      "session summaries stored before prompt caching get cache counts of 0, and those stored before fallback models the model their session started on (its session-start event's, else the project's, else 'unrecorded') (was: defaults on every read)",
    run: (context) =>
      forEachProjectBatch(context, (ids) => completeRedisSessionSummaries(context, ids)),
  },
  {
    id: '2026-12-04-memory-prefix',
    description:
      "memory keys follow BATON_PREFIX: a deployment with a prefix other than {baton} takes its projects' memory from baton:{<id>} to <its prefix without braces>:{<id>}, never a namespace the default deployment or another deployment holds (was: every deployment's memory under baton:{<id>}, shared by deployments with a project of the same id)",
    run: moveMemoryToDeploymentPrefix,
  },
  {
    id: '2026-12-04-event-fields',
    description:
      "turns, session starts, session results and check evidence written to a project's event stream before a field existed get what its absence meant (turns their session's model, session starts a sandbox 'off'), entry ids kept (was: defaults on every read)",
    run: (context) => forEachProjectBatch(context, (ids) => completeRedisEvents(context, ids)),
  },
  {
    id: '2026-12-04-session-summary-commits',
    description:
      'session summaries stored before sessions listed their commits get an empty list (was: a default on every read)',
    run: (context) =>
      forEachProjectBatch(context, (ids) => completeRedisSummaryCommits(context, ids)),
  },
  {
    id: '2026-12-04-event-defaults',
    description:
      "the other events written to a project's event stream before a field existed (tool calls, memory changes, API retries, checkpoints, the worker's events, a session start's interrupted, an applied edit's cleared_input_tokens) get what its absence meant, entry ids kept (was: defaults and lenient counts on every read)",
    run: (context) =>
      forEachProjectBatch(context, (ids) => completeRedisEventDefaults(context, ids)),
  },
];

/** Calls `each` with every stored project id, `BATCH` at a time, oldest first. */
async function forEachProjectBatch(
  context: MigrationContext,
  each: (ids: string[]) => Promise<void>,
): Promise<void> {
  for (let start = 0; ; start += BATCH) {
    const ids = await context.redis.zrange(
      context.keys.projects,
      String(start),
      String(start + BATCH - 1),
    );
    if (ids.length > 0) await each(ids);
    if (ids.length < BATCH) return;
  }
}

async function indexProjects(context: MigrationContext): Promise<void> {
  const { redis, keys } = context;
  // Set by the read-time fold-in this migration replaces: that prefix is indexed already.
  if ((await redis.exists(keys.projectIndexReady)) === 0) {
    await forEachProjectBatch(context, async (ids) => {
      const read = redis.pipeline();
      for (const id of ids) read.hget(keys.project(id), 'config');
      const configs = (await execPipeline(read)) as (string | null)[];
      const write = scriptPipeline(redis);
      ids.forEach((id, index) => {
        const goal = (JSON.parse(configs[index] ?? '{}') as { goal?: string }).goal ?? '';
        // The script reads the status itself, so a concurrent transition is never undone.
        scripts.queue(
          write,
          'indexProject',
          keys.project(id),
          keys.projectSearch,
          keys.projectIndexBase,
          id,
          searchText(id, goal),
        );
      });
      await execPipeline(write);
    });
  }
  await redis.del(keys.projectIndexReady);
}

/** Field the read-time fold-in set on a project hash once its flips were folded in. */
const FLIPS_FOLDED_FIELD = 'featureFlipsIndexed';

async function foldFeatureFlips(context: MigrationContext): Promise<void> {
  const { redis, keys } = context;
  await forEachProjectBatch(context, async (ids) => {
    const read = redis.pipeline();
    for (const id of ids) read.hget(keys.project(id), FLIPS_FOLDED_FIELD);
    const folded = (await execPipeline(read)) as (string | null)[];
    for (const [index, id] of ids.entries()) {
      if (folded[index] === null) {
        const fromSummaries = new Map<string, string>();
        for (const entry of await redis.lrange(keys.sessions(id), 0, -1)) {
          const session = JSON.parse(entry) as SessionSummary;
          const flip = JSON.stringify({
            sessionNumber: session.sessionNumber,
            sessionId: session.sessionId,
          } satisfies FeatureFlip);
          // Oldest first: a later session's flip of the same feature wins.
          for (const feature of session.flippedFeatures) fromSummaries.set(feature, flip);
        }
        const write = redis.pipeline();
        // HSETNX: a flip a session recorded since it ended is newer and stays.
        for (const [feature, flip] of fromSummaries)
          write.hsetnx(keys.featureFlips(id), feature, flip);
        if (fromSummaries.size > 0) await execPipeline(write);
      }
    }
    const clear = redis.pipeline();
    for (const id of ids) clear.hdel(keys.project(id), FLIPS_FOLDED_FIELD);
    await execPipeline(clear);
  });
}

/**
 * Rewrites each stored project config that `upgrade` changes (it returns null for one that is
 * already in the current shape), `BATCH` configs per read.
 */
async function upgradeProjectConfigs(
  context: MigrationContext,
  upgrade: (config: Record<string, unknown>, projectId: string) => Record<string, unknown> | null,
): Promise<void> {
  const { redis, keys } = context;
  await forEachProjectBatch(context, async (ids) => {
    const read = redis.pipeline();
    for (const id of ids) read.hget(keys.project(id), 'config');
    const configs = (await execPipeline(read)) as (string | null)[];
    for (const [index, id] of ids.entries()) {
      const stored = configs[index];
      if (stored === null || stored === undefined) continue;
      const upgraded = upgrade(JSON.parse(stored) as Record<string, unknown>, id);
      if (upgraded === null) continue;
      // The config is written once at creation; the compare only guards a re-created project.
      await scripts.call(
        redis,
        'replaceField',
        keys.project(id),
        'config',
        stored,
        JSON.stringify(upgraded),
      );
    }
  });
}

function storeProjectContexts(context: MigrationContext): Promise<void> {
  return upgradeProjectConfigs(context, (config) =>
    config.context !== undefined
      ? null
      : { ...config, context: { preset: config.contextPreset ?? 'coding' } },
  );
}

/** Session job states a job waits in before a worker takes it. */
const QUEUED_JOB_STATES = ['waiting', 'delayed', 'prioritized', 'waiting-children'] as const;

async function stampJobGenerations(context: MigrationContext): Promise<void> {
  const { redis, keys } = context;
  const queue = createSessionQueue({ connection: redis, keys });
  queue.on('error', () => undefined);
  try {
    for (const state of QUEUED_JOB_STATES) {
      // getJobs pages each state on its own; stamping changes no job's place in it.
      for (let start = 0; ; start += BATCH) {
        const jobs = await queue.getJobs(state, start, start + BATCH - 1, true);
        const unstamped = jobs.filter(
          (job) => job !== undefined && typeof job.data?.generation !== 'number',
        );
        if (unstamped.length > 0) {
          const read = redis.pipeline();
          for (const job of unstamped) {
            read.hmget(keys.project(job.data.projectId), 'id', 'createdAt');
          }
          const found = (await execPipeline(read)) as (string | null)[][];
          for (const [index, job] of unstamped.entries()) {
            const [id, createdAt] = found[index] ?? [];
            // A job of a project Redis no longer has stays without one: workers refuse it.
            if (typeof id !== 'string' || typeof createdAt !== 'string') continue;
            // A job a worker took meanwhile is gone from this state: nothing to stamp.
            await job
              .updateData({ ...job.data, generation: Number(createdAt) })
              .catch(() => undefined);
          }
        }
        if (jobs.length < BATCH) break;
      }
    }
  } finally {
    await queue.close();
  }
}

/**
 * What the absence of each config field meant before it was stored (the read-time defaults this
 * migration replaces). A project always had a goal and, after `2026-12-04-project-context`, a
 * context; the optional fields (fallback model, sandbox, verification, MCP) are absent when unset.
 */
function configDefaults(projectId: string): Record<string, unknown> {
  return {
    workspace: null,
    adoptWorkspace: false,
    model: null,
    budgets: {},
    contextPreset: 'coding',
    repo: null,
    base: null,
    baseCommit: null,
    branch: projectBranch(projectId),
    skipHooks: false,
  };
}

function storeProjectConfigDefaults(context: MigrationContext): Promise<void> {
  return upgradeProjectConfigs(context, (config, projectId) => {
    const defaults = configDefaults(projectId);
    const complete = Object.keys(defaults).every((field) => config[field] !== undefined);
    return complete ? null : { ...defaults, ...config };
  });
}
