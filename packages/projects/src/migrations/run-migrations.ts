/**
 * Runs the Redis data migrations (`REDIS_MIGRATIONS`) once per prefix: at `baton up` and worker
 * start, one runner at a time (a lock with a fencing token, extended while it works), each id
 * recorded in `keys.migrations` as it completes. A Redis that holds an id this version does not
 * know was upgraded by a newer Baton: nothing runs and the caller refuses to start.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { ProjectError } from '../errors.js';
import { scripts } from '../internal/scripts.js';
import { SCRIPT_STATUS } from '../internal/status.js';
import type { BatonKeys } from '../keys.js';
import { DEFAULT_KEY_PREFIX, type RedisClient } from '@baton/storage-redis';
import { REDIS_MIGRATIONS } from './redis-migrations.js';

export interface RunRedisMigrationsOptions {
  redis: RedisClient;
  keys: BatonKeys;
  /**
   * Where earlier versions kept every deployment's memory. Default storage-redis
   * `DEFAULT_KEY_PREFIX` (`baton`); tests name one of their own.
   */
  legacyMemoryPrefix?: string | undefined;
  /**
   * Hears what a migration left undone, one call (one log line) per migration that did: the
   * worker logs it as a warning. Default: nothing.
   */
  report?: ((notice: MigrationNotice) => void) | undefined;
  /** How long another runner's lock is waited for before giving up (ms). Default 120000. */
  waitMs?: number | undefined;
  /** Lifetime of the lock if this runner dies; extended every third of it (ms). Default 30000. */
  lockTtlMs?: number | undefined;
}

/** What a migration left undone and why (`RunRedisMigrationsOptions.report`). */
export interface MigrationNotice {
  /** The migration's id. */
  migration: string;
  /** One line: what was not done, for which projects, and where to read more. */
  message: string;
  /** The projects it concerns. */
  projects: readonly string[];
}

/** Which migrations Redis has had, and which of its ids this version does not know. */
export interface MigrationState {
  /** Ids of this version's migrations not applied yet, in order. */
  pending: string[];
  /** Ids Redis holds that this version does not list (a newer Baton applied them). */
  unknown: string[];
}

/** One HKEYS: what is pending and what is newer than this version. */
export async function readMigrationState(
  redis: RedisClient,
  keys: BatonKeys,
): Promise<MigrationState> {
  const applied = new Set(await redis.hkeys(keys.migrations));
  const known = new Set(REDIS_MIGRATIONS.map((migration) => migration.id));
  return {
    pending: REDIS_MIGRATIONS.map((migration) => migration.id).filter((id) => !applied.has(id)),
    unknown: [...applied].filter((id) => !known.has(id)).sort(),
  };
}

/** The one-line refusal on data a newer Baton migrated. */
export function newerDataError(keys: BatonKeys, unknown: readonly string[]): ProjectError {
  return new ProjectError(
    'newer_data',
    `Redis (prefix ${keys.prefix}) holds data migrated by a newer Baton (migration ${unknown.join(', ')}): ` +
      'upgrade this Baton to the version the other workers run (docs/operations.md#upgrading)',
  );
}

/**
 * What is pending, after recording a fresh prefix as migrated: a prefix with no project and no
 * worker's deployment marker holds nothing an earlier version stored, so every id is recorded as
 * applied (marked `fresh`). Creating the first project, from the control API or a test's
 * repository, goes through here. One HKEYS when nothing is pending.
 */
export async function recordFreshData(
  redis: RedisClient,
  keys: BatonKeys,
): Promise<MigrationState> {
  const state = await readMigrationState(redis, keys);
  if (state.pending.length === 0 || state.unknown.length > 0) return state;
  // A worker writes its deployment marker at start and every version creates projects through
  // the index set: with neither, no earlier version stored anything here.
  if ((await redis.exists(keys.projects, keys.deployment)) !== 0) return state;
  const at = `${new Date().toISOString()} fresh`;
  await redis.hset(keys.migrations, Object.fromEntries(state.pending.map((id) => [id, at])));
  return { pending: [], unknown: [] };
}

/**
 * Refuses a write by a process that does not migrate (the control API: CLI, dashboard) while a
 * migration is pending, in one line (`migration_pending`), and on data a newer Baton migrated
 * (`newer_data`). A fresh prefix is recorded as migrated first (`recordFreshData`), so a project
 * can be created before any worker ran.
 */
export async function requireMigratedData(redis: RedisClient, keys: BatonKeys): Promise<void> {
  const state = await recordFreshData(redis, keys);
  if (state.unknown.length > 0) throw newerDataError(keys, state.unknown);
  if (state.pending.length === 0) return;
  throw new ProjectError(
    'migration_pending',
    `Redis (prefix ${keys.prefix}) holds data of an earlier Baton that is not migrated yet (${state.pending.join(', ')}): ` +
      'start a worker or `baton up` of this version first, which migrates it (docs/operations.md#upgrading)',
  );
}

/**
 * Applies every pending migration under the lock; returns the ids this call applied (empty when
 * another runner applied them first). Throws `ProjectError('newer_data')` without running
 * anything when Redis holds an id this version does not know.
 */
export async function runRedisMigrations(options: RunRedisMigrationsOptions): Promise<string[]> {
  const { redis, keys } = options;
  const before = await readMigrationState(redis, keys);
  if (before.unknown.length > 0) throw newerDataError(keys, before.unknown);
  if (before.pending.length === 0) return [];
  const lock = await takeLock(options);
  try {
    // Read again under the lock: a runner that held it before may have applied them.
    const state = await readMigrationState(redis, keys);
    if (state.unknown.length > 0) throw newerDataError(keys, state.unknown);
    const ran: string[] = [];
    for (const migration of REDIS_MIGRATIONS) {
      if (!state.pending.includes(migration.id)) continue;
      await migration.run({
        redis,
        keys,
        legacyMemoryPrefix: options.legacyMemoryPrefix ?? DEFAULT_KEY_PREFIX,
        report: (message, projects) =>
          options.report?.({ migration: migration.id, message, projects }),
        checkLock: () => lock.check(),
        lockToken: lock.token,
      });
      await lock.record(migration.id);
      ran.push(migration.id);
    }
    return ran;
  } finally {
    await lock.release();
  }
}

/** The refusal of a runner that lost the migration lock (another may be migrating now). */
export function lostLockError(keys: BatonKeys): ProjectError {
  return new ProjectError(
    'conflict',
    `lost the Redis migration lock ${keys.migrationLock} while migrating: start again`,
  );
}

interface HeldLock {
  /** The value of `keys.migrationLock` while this runner holds it. */
  token: string;
  /** Throws when the lock was lost while a migration ran (its next id is then not recorded). */
  check(): void;
  /**
   * Records migration `id` as applied in the same step as a check that this runner still holds
   * the lock (`fenced-batch-1.lua`), so a runner whose lock another took over (its TTL ran out
   * unnoticed) never records what the other is running; throws then.
   */
  record(id: string): Promise<void>;
  release(): Promise<void>;
}

async function takeLock(options: RunRedisMigrationsOptions): Promise<HeldLock> {
  const { redis, keys } = options;
  const token = randomUUID();
  const ttlMs = options.lockTtlMs ?? 30_000;
  const deadline = Date.now() + (options.waitMs ?? 120_000);
  // Another process is migrating: its lock goes when it is done (or dies and the TTL runs out).
  while ((await redis.set(keys.migrationLock, token, 'PX', ttlMs, 'NX')) !== 'OK') {
    if (Date.now() > deadline) {
      throw new ProjectError(
        'conflict',
        `Redis migrations are still held by another process after ${Math.round((options.waitMs ?? 120_000) / 1000)} s (lock ${keys.migrationLock}): wait for it, or delete that key if no Baton process is running`,
      );
    }
    await delay(100);
  }
  let lost = false;
  const timer = setInterval(
    () => {
      scripts.call(redis, 'extendLock', keys.migrationLock, token, ttlMs).then(
        (reply) => {
          if (reply !== SCRIPT_STATUS.owned) lost = true;
        },
        () => undefined,
      );
    },
    Math.max(1, Math.floor(ttlMs / 3)),
  );
  timer.unref();
  return {
    token,
    check() {
      if (lost) throw lostLockError(keys);
    },
    async record(id) {
      if (lost) throw lostLockError(keys);
      const write = ['HSET', keys.migrations, id, new Date().toISOString()];
      const reply = (await scripts.call(
        redis,
        'fencedBatch',
        keys.migrationLock,
        token,
        JSON.stringify([write]),
      )) as unknown[];
      if (reply[0] !== SCRIPT_STATUS.owned) throw lostLockError(keys);
    },
    async release() {
      clearInterval(timer);
      await scripts.call(redis, 'releaseLease', keys.migrationLock, token);
    },
  };
}
