import type { StoreLimits } from '@baton/core';
import { Redis, type RedisOptions } from 'ioredis';
import { memoryConnectionOptions, type RedisClient } from './redis-connection.js';

const UNLIMITED = '-1';

/** Options of `createRedisMemoryStore`. Give exactly one of `redis` and `url`. */
export interface RedisMemoryStoreOptions {
  /** An ioredis `Redis` or `Cluster` client to use; the store never closes it. */
  redis?: RedisClient;
  /** Redis URL (`redis://host:port/db`); the store opens its own connection and closes it in `close()`. */
  url?: string;
  /** Extra ioredis options for the connection opened from `url`. Default: see `DEFAULT_CONNECTION_OPTIONS`. */
  redisOptions?: RedisOptions;
  /** The memory namespace (one project's `/memories` tree). No braces or whitespace. */
  namespace: string;
  /** First part of every key. Default `'baton'` (keys look like `baton:{namespace}:...`). */
  prefix?: string | undefined;
  /** Quotas enforced atomically by the write scripts. Default: unlimited. */
  limits?: StoreLimits | undefined;
  /** Versions kept per file, newest (the current content) first; 0 or 1 keeps only the current one. Default 5. */
  historyDepth?: number | undefined;
  /**
   * Bytes of older versions kept per file. An edit of a version this store saw costs a reverse
   * delta of about the changed span; an overwrite of a version it did not see costs a copy of the
   * old file. The oldest versions are dropped first when the budget is exceeded. Default 1 MiB.
   */
  historyMaxBytes?: number | undefined;
  /** Approximate cap of the change-feed stream (`XADD MAXLEN ~`); 0 turns the feed off. Default 10,000. */
  feedMaxLength?: number | undefined;
  /** Compare-and-set attempts of one `edit` before it fails with `conflict`. Default 100. */
  maxEditAttempts?: number;
  /**
   * Files whose last read or written version this store keeps in memory, so an `edit` right after
   * a `read` or `write` (the usual view-then-str_replace pattern) commits in one round trip. Always
   * safe: the commit is compare-and-set on the version, so a stale entry only costs a retry.
   * 0 turns the cache off. Default 4,096.
   */
  editCacheEntries?: number;
  /** Upper bound of the cached content in UTF-16 code units (about bytes for text). Default 16 Mi. */
  editCacheChars?: number;
  /**
   * Access-time granularity ("relatime") in ms. Reads record a file's access time for the expiry
   * sweep; this store records it at most once per granularity per path: a read of a path it
   * recorded (or wrote) less than this long ago is one plain `HMGET` instead of a script (cheaper
   * in Redis). So a file's access time can lag its last read by up to this much: sweep with an
   * idle time well above it. 0 records every read. Default 60,000 (one minute).
   */
  accessTimeGranularityMs?: number | undefined;
  /**
   * Fencing of the writer (docs/operations.md "Fencing"): every write, delete and rename presents
   * `token`, and Redis refuses it once any writer presented a higher one (a session that replaced
   * this store's session after it lost its lease). A refused call throws `StoreError('unavailable')`
   * and calls `onFenced` first. Default: unfenced (always allowed, raises nothing).
   */
  fence?: MemoryFence | undefined;
}

/** A writer's fencing token; see `RedisMemoryStoreOptions.fence`. */
export interface MemoryFence {
  /** Positive integer, higher for every newer session of the namespace. */
  token: number;
  /** Called when a write is refused because a newer writer holds the namespace. Must not throw. */
  onFenced?: (() => void) | undefined;
}

/**
 * ioredis options for a connection the store opens itself. Commands that were already sent when
 * a connection dropped are failed instead of resent: a resent script could apply a mutation twice
 * (the caller sees `unavailable` and decides). Commands issued while disconnected wait for one
 * reconnection attempt, then fail with `unavailable`. Reconnection backs off exponentially from
 * 50 ms to at most 2 s, so a restarted Redis is picked up quickly.
 */
export const DEFAULT_CONNECTION_OPTIONS: RedisOptions = {
  ...memoryConnectionOptions(),
  retryStrategy: (times) =>
    Math.min(50 * 2 ** Math.min(times - 1, 10), 2_000) + Math.floor(Math.random() * 50),
};

/** Options of `readChanges`. */
export interface ReadChangesOptions {
  /** Return entries strictly after this stream id. Default: from the oldest entry kept. */
  after?: string;
  /** At most this many entries. Default 100. */
  count?: number;
}

/** Options of `sweepExpired`. */
export interface SweepOptions {
  /** Remove files not read or written for at least this long (ms, Redis server clock). */
  olderThanMs?: number;
  /** Or: remove files last read or written before this time (epoch ms, Redis server clock). */
  accessedBefore?: number;
  /** Files removed per script call (each batch is atomic). Default 500. */
  batchSize?: number;
}

/** Result of `sweepExpired`. */
export interface SweepResult {
  /** Store paths of the removed files. */
  removed: string[];
}

/** The numeric options, checked and defaulted once (limits as the scripts' arguments). */
export interface StoreSettings {
  historyDepth: number;
  historyMaxBytes: number;
  feedMaxLength: number;
  editCacheEntries: number;
  editCacheChars: number;
  accessTimeGranularityMs: number;
  maxEditAttempts: number;
  /** maxFileBytes, maxTotalBytes, maxFiles; `-1` for no limit. */
  limits: readonly [string, string, string];
}

/** Checks the numeric options (a `TypeError` names the bad one) and applies their defaults. */
export function resolveStoreSettings(options: RedisMemoryStoreOptions): StoreSettings {
  const limits = options.limits ?? {};
  return {
    historyDepth: nonNegativeInteger(options.historyDepth ?? 5, 'historyDepth'),
    historyMaxBytes: nonNegativeInteger(options.historyMaxBytes ?? 1_048_576, 'historyMaxBytes'),
    feedMaxLength: nonNegativeInteger(options.feedMaxLength ?? 10_000, 'feedMaxLength'),
    editCacheEntries: nonNegativeInteger(options.editCacheEntries ?? 4_096, 'editCacheEntries'),
    editCacheChars: nonNegativeInteger(options.editCacheChars ?? 16_777_216, 'editCacheChars'),
    accessTimeGranularityMs: nonNegativeInteger(
      options.accessTimeGranularityMs ?? 60_000,
      'accessTimeGranularityMs',
    ),
    maxEditAttempts: Math.max(
      1,
      nonNegativeInteger(options.maxEditAttempts ?? 100, 'maxEditAttempts'),
    ),
    limits: [
      limitArgument(limits.maxFileBytes),
      limitArgument(limits.maxTotalBytes),
      limitArgument(limits.maxFiles),
    ],
  };
}

/** The connection a store opens (and closes) itself from `url`. */
export function openConnection(url: string, redisOptions: RedisOptions | undefined): Redis {
  const client = new Redis(url, {
    ...DEFAULT_CONNECTION_OPTIONS,
    ...redisOptions,
    // The scripts' replies are parsed as RESP2-shaped arrays.
    replyMapping: 'legacy',
  });
  // Failures surface as rejected calls (`unavailable`); the event only needs a listener.
  client.on('error', () => undefined);
  return client;
}

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative integer, got ${value}.`);
  }
  return value;
}

function limitArgument(limit: number | undefined): string {
  return limit === undefined || !Number.isFinite(limit)
    ? UNLIMITED
    : String(Math.max(0, Math.floor(limit)));
}
