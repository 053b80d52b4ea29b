import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  StoreError,
  type EditResult,
  type EntryStat,
  type ListOptions,
  type ListedEntry,
  type MemoryStore,
  type MutationContext,
  type StoreLimits,
  type StoreUsage,
  type WriteOptions,
} from '@baton/core';
// assertStorePath also refuses NUL, which separates entries in the list script's reply.
import { assertStorePath, DIRECTORY_SIZE, isHiddenName } from '@baton/core/store-kit';
import { Redis, type RedisOptions } from 'ioredis';
import {
  BODY_HEADER_BYTES,
  createNamespaceKeys,
  DEFAULT_KEY_PREFIX,
  type NamespaceKeys,
} from './keys.js';
import { AccessRecords } from './internal/access-records.js';
import { defineScripts, type ScriptCommands } from './internal/scripts.js';
import type { RedisClient } from './lua-scripts.js';
import { applyReverseDelta, createReverseDelta } from './internal/history-delta.js';
import { ScriptStatus, statusError, toStoreError } from './internal/status.js';

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
  prefix?: string;
  /** Quotas enforced atomically by the write scripts. Default: unlimited. */
  limits?: StoreLimits;
  /** Versions kept per file, newest (the current content) first; 0 or 1 keeps only the current one. Default 5. */
  historyDepth?: number;
  /**
   * Bytes of older versions kept per file. An edit of a version this store saw costs a reverse
   * delta of about the changed span; an overwrite of a version it did not see costs a copy of the
   * old file. The oldest versions are dropped first when the budget is exceeded. Default 1 MiB.
   */
  historyMaxBytes?: number;
  /** Approximate cap of the change-feed stream (`XADD MAXLEN ~`); 0 turns the feed off. Default 10,000. */
  feedMaxLength?: number;
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
  accessTimeGranularityMs?: number;
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
  maxRetriesPerRequest: 1,
  retryStrategy: (times) =>
    Math.min(50 * 2 ** Math.min(times - 1, 10), 2_000) + Math.floor(Math.random() * 50),
  autoResendUnfulfilledCommands: false,
  connectTimeout: 5_000,
};

/** One version of a file kept in its history. */
export interface FileVersion {
  /** Version id, `<epoch>:<sequence>`: unique within the namespace, also across `clear()`. */
  version: string;
  /** When it was written (epoch ms, Redis server clock). */
  at: number;
  /** Size in bytes. */
  bytes: number;
  /** The command that wrote it (`create`, `str_replace`, `write`, `edit`, ...). */
  command: string;
  /** Session that wrote it, if known. */
  session?: string;
}

/** One entry of the change feed. */
export interface RedisMemoryChange {
  /** Stream id, usable as `after` in `readChanges`. */
  id: string;
  /** Epoch ms (Redis server clock). */
  at: number;
  /** `create`, `str_replace`, `insert`, `delete`, `rename`, `write`, `edit`, `expire`, ... */
  command: string;
  /** Store path (for rename: the old path). */
  path: string;
  /** Rename only: the new path. */
  newPath?: string;
  /** Size after the change (0 for delete, expire and directory renames). */
  bytes: number;
  /** Session from the `MutationContext`, if given. */
  session?: string;
}

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

/** A file's content with the version it was stored under. */
interface Versioned {
  content: string;
  version: string;
}

const UNLIMITED = '-1';

/**
 * Largest reverse delta sent to the write script, in UTF-16 code units. A script argument costs
 * Redis far more per byte than a plain command (a 100 KB one costs more than the whole write), so
 * a bigger delta (a rewrite rather than an edit) is not sent: the script keeps the old version
 * whole by renaming its hash instead.
 */
const MAX_DELTA_SENT = 4_096;

/** The blank header a write stages before its content; the script writes the version there. */
const BLANK_HEADER = ' '.repeat(BODY_HEADER_BYTES);

/** Content from which a write stages its body in a key of its own (see `sendWrite`). */
const STAGED_FROM_CHARS = 32 * 1024;

/**
 * Expiry of a write's stage key. The write script runs right behind the SETEX and renames or
 * deletes it; the expiry only cleans up if the script never ran (a connection lost between the
 * two, a script error).
 */
const STAGE_TTL_SECONDS = 60;

/**
 * `MemoryStore` on Redis: one namespace per store, every mutation one atomic Lua script.
 * See docs/operations.md for the key schema and the Redis settings it needs.
 */
export class RedisMemoryStore implements MemoryStore {
  /** The namespace this store serves. */
  readonly namespace: string;
  /** The keys of the namespace. */
  readonly keys: NamespaceKeys;
  private readonly client: RedisClient & ScriptCommands;
  private readonly ownsClient: boolean;
  private readonly limits: readonly [string, string, string];
  private readonly historyDepth: number;
  private readonly historyMaxBytes: number;
  private readonly feedMaxLength: number;
  private readonly maxEditAttempts: number;
  private readonly prefixes: readonly [string, string, string, string, string];
  /** Makes this store's write stage keys unique: `<stageId>:<writes>`. */
  private readonly stageId = randomBytes(6).toString('hex');
  private writes = 0;
  private readonly editCacheEntries: number;
  private readonly editCacheChars: number;
  private cachedChars = 0;
  /** path -> last version this store saw (LRU by insertion order). */
  private readonly recent = new Map<string, Versioned>();
  /** When this store last had Redis record each path's access time. */
  private readonly accessRecords: AccessRecords;
  private closed = false;
  private readonly fence: MemoryFence | undefined;

  constructor(options: RedisMemoryStoreOptions) {
    if ((options.redis === undefined) === (options.url === undefined)) {
      throw new TypeError('createRedisMemoryStore needs exactly one of `redis` and `url`.');
    }
    this.namespace = options.namespace;
    if (
      options.fence !== undefined &&
      !(Number.isSafeInteger(options.fence.token) && options.fence.token > 0)
    ) {
      throw new TypeError('fence.token must be a positive integer.');
    }
    this.fence = options.fence;
    this.keys = createNamespaceKeys(options.namespace, options.prefix ?? DEFAULT_KEY_PREFIX);
    this.historyDepth = nonNegativeInteger(options.historyDepth ?? 5, 'historyDepth');
    this.historyMaxBytes = nonNegativeInteger(
      options.historyMaxBytes ?? 1_048_576,
      'historyMaxBytes',
    );
    this.feedMaxLength = nonNegativeInteger(options.feedMaxLength ?? 10_000, 'feedMaxLength');
    this.editCacheEntries = nonNegativeInteger(
      options.editCacheEntries ?? 4_096,
      'editCacheEntries',
    );
    this.editCacheChars = nonNegativeInteger(
      options.editCacheChars ?? 16_777_216,
      'editCacheChars',
    );
    this.accessRecords = new AccessRecords(
      nonNegativeInteger(options.accessTimeGranularityMs ?? 60_000, 'accessTimeGranularityMs'),
    );
    this.maxEditAttempts = Math.max(
      1,
      nonNegativeInteger(options.maxEditAttempts ?? 100, 'maxEditAttempts'),
    );
    const limits = options.limits ?? {};
    this.limits = [
      limitArgument(limits.maxFileBytes),
      limitArgument(limits.maxTotalBytes),
      limitArgument(limits.maxFiles),
    ];
    this.prefixes = [
      this.keys.childrenPrefix,
      this.keys.filePrefix,
      this.keys.historyPrefix,
      this.keys.keptPrefix,
      this.keys.bodyPrefix,
    ];
    if (options.redis !== undefined) {
      this.ownsClient = false;
      this.client = defineScripts(options.redis);
    } else {
      this.ownsClient = true;
      const client = new Redis(options.url ?? '', {
        ...DEFAULT_CONNECTION_OPTIONS,
        ...options.redisOptions,
        // The scripts' replies are parsed as RESP2-shaped arrays.
        replyMapping: 'legacy',
      });
      // Failures surface as rejected calls (`unavailable`); the event only needs a listener.
      client.on('error', () => undefined);
      this.client = defineScripts(client);
    }
  }

  /** The ioredis client the store runs on (for health checks and tooling). */
  get redis(): RedisClient {
    return this.client;
  }

  async read(path: string): Promise<string | null> {
    // The steady state of a file read again within the access-time granularity, inline: one
    // GET of the body and no further async layers (a view is one GET round trip plus this).
    const recordedVersion = path === '' ? undefined : this.accessRecords.recentVersion(path);
    if (recordedVersion !== undefined) {
      assertStorePath(path);
      this.ensureOpen();
      let body: string | null;
      try {
        body = await this.client.get(this.keys.body(path));
      } catch (error) {
        throw toStoreError(error, `read ${path}`);
      }
      const read = body === null ? undefined : parseBody(body);
      if (read !== undefined && read.version === recordedVersion) {
        this.remember(path, read);
        return read.content;
      }
      // Gone or rewritten elsewhere: the script reads it and records the access.
      this.accessRecords.drop(path);
    }
    return (await this.readVersioned(path, 'read'))?.content ?? null;
  }

  async stat(path: string): Promise<EntryStat | null> {
    assertStorePath(path);
    this.ensureOpen();
    try {
      if (path === '') {
        const modified = await this.client.hget(this.keys.meta, 'rootm');
        return {
          kind: 'directory',
          size: DIRECTORY_SIZE,
          modifiedAt: modified === null ? 0 : Number(modified),
        };
      }
      const [parent, name] = splitPath(path);
      const value = await this.client.hget(this.keys.children(parent), name);
      return value === null ? null : parseIndexValue(value);
    } catch (error) {
      throw toStoreError(error, `stat ${path}`);
    }
  }

  async write(path: string, content: string, options: WriteOptions): Promise<void> {
    assertStorePath(path);
    if (path === '') {
      throw options.mode === 'create'
        ? new StoreError('exists', 'The root already exists.')
        : new StoreError('is_directory', 'The root is a directory.');
    }
    const command = options.command ?? (options.mode === 'create' ? 'create' : 'write');
    const reply = await this.runWrite(
      path,
      content,
      options.mode,
      '',
      command,
      options.session,
      options.mode === 'create' ? undefined : this.recent.get(path),
    );
    if (reply[0] !== ScriptStatus.ok) {
      throw statusError(Number(reply[0]), path, undefined, Number(reply[1]));
    }
    this.remember(path, { content, version: String(reply[1]) });
  }

  /**
   * Read-modify-write with compare-and-set: take the content and its version (from the edit cache
   * if this store just read or wrote the file, otherwise read like `read`, which also records the
   * access), run `transform` in this process, then commit with the write script in `cas` mode,
   * which only writes if the file still has that version. On a conflict the script returns the
   * current content and version, so each retry is one more round trip; after `maxEditAttempts`
   * the edit fails with `conflict`. `transform` may therefore run more than once. If it throws on
   * cached content, the content is read again and the transform retried once on it, so its errors
   * always describe the stored content.
   */
  async edit(
    path: string,
    transform: (current: string) => string,
    context: MutationContext = {},
  ): Promise<EditResult> {
    assertStorePath(path);
    if (path === '') {
      throw new StoreError('is_directory', 'The root is a directory.');
    }
    let current = this.recent.get(path) ?? null;
    let fromCache = current !== null;
    current ??= await this.readVersioned(path, 'edit');
    const command = context.command ?? 'edit';
    for (let attempt = 1; ; attempt += 1) {
      if (current === null) {
        throw statusError(ScriptStatus.notFound, path);
      }
      let after: string;
      try {
        after = transform(current.content);
      } catch (error) {
        if (!fromCache) {
          throw error;
        }
        this.uncache(path);
        fromCache = false;
        current = await this.readVersioned(path, 'edit');
        continue;
      }
      const reply = await this.runWrite(
        path,
        after,
        'cas',
        current.version,
        command,
        context.session,
        current,
      );
      const status = Number(reply[0]);
      if (status === ScriptStatus.ok) {
        this.remember(path, { content: after, version: String(reply[1]) });
        return { before: current.content, after };
      }
      if (status !== ScriptStatus.conflict) {
        this.uncache(path);
        throw statusError(status, path, undefined, Number(reply[1]));
      }
      current = parseBody(String(reply[2]));
      fromCache = false;
      if (attempt >= this.maxEditAttempts) {
        this.uncache(path);
        throw statusError(status, path);
      }
      if (attempt >= 3) {
        // Many writers on one file: spread the retries so one of them wins each round.
        await delay(Math.random() * Math.min(attempt, 20));
      }
    }
  }

  async list(path: string, options: ListOptions): Promise<ListedEntry[]> {
    assertStorePath(path);
    const depth = Number.isFinite(options.depth)
      ? Math.max(0, Math.floor(options.depth))
      : 1_000_000;
    const reply = await this.run('list', path, () =>
      this.client.batonMemoryList(
        this.keys.meta,
        ...this.prefixes,
        path,
        String(depth),
        options.skipHidden === true ? '1' : '0',
      ),
    );
    const status = Number(reply[0]);
    if (status !== ScriptStatus.ok) {
      throw statusError(status, path);
    }
    const entries: ListedEntry[] = [];
    const skipHidden = options.skipHidden === true;
    for (let index = 1; index + 2 < reply.length; index += 3) {
      const directory = String(reply[index]);
      const depth = Number(reply[index + 1]);
      const packed = String(reply[index + 2]);
      const children = packed === '' ? [] : packed.split('\0');
      for (let child = 0; child + 1 < children.length; child += 2) {
        const name = children[child] as string;
        if (skipHidden && isHiddenName(name)) {
          continue;
        }
        const stat = parseIndexValue(children[child + 1] as string);
        entries.push({
          path: directory === '' ? name : `${directory}/${name}`,
          depth,
          kind: stat.kind,
          size: stat.size,
          modifiedAt: stat.modifiedAt,
        });
      }
    }
    entries.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
    return entries;
  }

  async delete(path: string, context: MutationContext = {}): Promise<void> {
    assertStorePath(path);
    if (path === '') {
      throw new StoreError('invalid_path', 'The root cannot be deleted.');
    }
    const reply = await this.run('delete', path, () =>
      this.client.batonMemoryDelete(
        this.keys.meta,
        this.keys.accessTimes,
        this.keys.feed,
        ...this.prefixes,
        path,
        String(this.feedMaxLength),
        context.command ?? 'delete',
        oneLine(context.session),
        this.fenceArgument,
      ),
    );
    this.forget(path);
    if (reply[0] !== ScriptStatus.ok) {
      throw statusError(Number(reply[0]), path);
    }
  }

  async rename(from: string, to: string, context: MutationContext = {}): Promise<void> {
    assertStorePath(from);
    assertStorePath(to);
    if (from === '' || to === '') {
      throw new StoreError(
        'invalid_path',
        'The root cannot be renamed, and nothing can be renamed onto it.',
      );
    }
    const reply = await this.run('rename', from, () =>
      this.client.batonMemoryRename(
        this.keys.meta,
        this.keys.accessTimes,
        this.keys.feed,
        ...this.prefixes,
        from,
        to,
        String(this.feedMaxLength),
        context.command ?? 'rename',
        oneLine(context.session),
        this.fenceArgument,
      ),
    );
    if (reply[0] !== ScriptStatus.ok) {
      throw statusError(Number(reply[0]), from, to);
    }
    this.forget(from);
    // A moved file keeps its access time, which may be older than this store's record of `to`.
    this.forget(to);
  }

  async usage(): Promise<StoreUsage> {
    this.ensureOpen();
    try {
      const [bytes, files] = await this.client.hmget(this.keys.meta, 'bytes', 'files');
      return { bytes: Number(bytes ?? 0), files: Number(files ?? 0) };
    } catch (error) {
      throw toStoreError(error, 'read usage');
    }
  }

  /** Closes the connection if the store opened it; a client passed in stays open. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    if (this.ownsClient) {
      try {
        await this.client.quit();
      } catch {
        // Already disconnected: nothing left to release.
        this.client.disconnect();
      }
    }
  }

  /**
   * Versions kept for `path`, newest (the current content) first. Empty if there is no file or
   * history is off (then only while the file exists is its current version listed).
   */
  async listHistory(path: string): Promise<FileVersion[]> {
    const history = await this.loadHistory(path, false);
    return history.map(({ payload: _payload, kind: _kind, ...version }) => version);
  }

  /** Content of `path` at `version` (from `listHistory`), or `null` if that version is not kept. */
  async readHistory(path: string, version: string): Promise<string | null> {
    const history = await this.loadHistory(path);
    let content: string | null = null;
    for (const entry of history) {
      // Each delta rebuilds a version from the next newer one; the newest entry is the file.
      content =
        entry.kind === 'd' && content !== null
          ? applyReverseDelta(content, entry.payload)
          : entry.payload;
      if (entry.version === version) {
        return content;
      }
    }
    return null;
  }

  /** Change-feed entries, oldest first. */
  async readChanges(options: ReadChangesOptions = {}): Promise<RedisMemoryChange[]> {
    this.ensureOpen();
    try {
      const start = options.after === undefined ? '-' : `(${options.after}`;
      const entries = await this.client.xrange(
        this.keys.feed,
        start,
        '+',
        'COUNT',
        options.count ?? 100,
      );
      return entries.map(([id, fields]) => parseChange(id, fields));
    } catch (error) {
      throw toStoreError(error, 'read the change feed');
    }
  }

  /**
   * Removes files not read or written for `olderThanMs` (or since `accessedBefore`; both by the
   * Redis server clock; reads show up with a lag of up to `accessTimeGranularityMs`), in atomic
   * batches, until none is left. Safe to run while others write: a file touched after the
   * batch ran is kept; one removed before a write is simply created again by it.
   */
  async sweepExpired(options: SweepOptions): Promise<SweepResult> {
    if ((options.olderThanMs === undefined) === (options.accessedBefore === undefined)) {
      throw new TypeError('sweepExpired needs exactly one of olderThanMs and accessedBefore.');
    }
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? 500));
    const removed: string[] = [];
    for (;;) {
      const reply = await this.run('sweep expired files', '', () =>
        this.client.batonMemorySweep(
          this.keys.meta,
          this.keys.accessTimes,
          this.keys.feed,
          ...this.prefixes,
          String(Math.max(0, Math.floor(options.olderThanMs ?? 0))),
          String(batchSize),
          String(this.feedMaxLength),
          options.accessedBefore === undefined ? '' : String(Math.floor(options.accessedBefore)),
        ),
      );
      const paths = reply.slice(1).map(String);
      for (const path of paths) {
        this.accessRecords.drop(path);
      }
      removed.push(...paths);
      if (paths.length < batchSize) {
        return { removed };
      }
    }
  }

  /**
   * Removes the whole namespace: every file, directory, history, access time and the feed.
   * For tests and for deleting a project.
   */
  async clear(): Promise<void> {
    const entries = await this.list('', { depth: 1 });
    for (const entry of entries) {
      await this.delete(entry.path, { command: 'clear' });
    }
    try {
      await this.client.del(this.keys.meta, this.keys.accessTimes, this.keys.feed);
    } catch (error) {
      throw toStoreError(error, 'clear the namespace');
    }
    this.accessRecords.clear();
  }

  private async readVersioned(path: string, action: string): Promise<Versioned | null> {
    assertStorePath(path);
    if (path === '') {
      throw new StoreError('is_directory', 'The root is a directory.');
    }
    const recordedVersion = this.accessRecords.recentVersion(path);
    if (recordedVersion !== undefined) {
      const read = await this.readWithoutRecording(path, action, recordedVersion);
      if (read !== 'record') {
        return read;
      }
    }
    const sentAt = performance.now();
    const reply = await this.run(action, path, () =>
      this.client.batonMemoryRead(this.keys.accessTimes, ...this.prefixes, path),
    );
    const status = Number(reply[0]);
    if (status === ScriptStatus.ok) {
      const versioned = parseBody(String(reply[1]));
      this.remember(path, versioned);
      this.accessRecords.record(path, versioned.version, sentAt);
      return versioned;
    }
    this.uncache(path);
    if (status === ScriptStatus.notFound) {
      return null;
    }
    throw statusError(status, path);
  }

  /**
   * The read of a path whose access this store recorded less than the granularity ago: one plain
   * `GET` of the body, which starts with its version (no script, no access-time write). Returns
   * `'record'` when the file is not there (the script then answers not found or is_directory from
   * the index, or moves a file written before bodies existed) or has another version than the
   * recorded one (written, or moved here with an older access time, by another store), so the
   * caller reads it with the script. Only `GET`, not also the parent's index entry: two commands
   * sent back-to-back cost about two round trips on a fast loopback.
   */
  private async readWithoutRecording(
    path: string,
    action: string,
    recordedVersion: string,
  ): Promise<Versioned | 'record'> {
    const body = await this.run(action, path, () => this.client.get(this.keys.body(path)));
    const versioned = body === null ? undefined : parseBody(body);
    if (versioned === undefined || versioned.version !== recordedVersion) {
      this.accessRecords.drop(path);
      return 'record';
    }
    this.remember(path, versioned);
    return versioned;
  }

  private async runWrite(
    path: string,
    content: string,
    mode: 'create' | 'overwrite' | 'cas',
    expectedVersion: string,
    command: string,
    session: string | undefined,
    replaced: Versioned | undefined,
  ): Promise<unknown[]> {
    const sentAt = performance.now();
    // The script uses the delta only if `replaced` is still the stored version.
    let deltaBase = '';
    let delta = '';
    if (this.historyDepth > 1 && replaced !== undefined) {
      const candidate = createReverseDelta(replaced.content, content);
      if (candidate.length <= MAX_DELTA_SENT) {
        deltaBase = replaced.version;
        delta = candidate;
      }
    }
    this.writes += 1;
    const stage = this.keys.writeStage(`${this.stageId}:${this.writes}`);
    const keys = [this.keys.meta, this.keys.accessTimes, this.keys.feed, stage];
    const args = [
      ...this.prefixes,
      path,
      mode,
      expectedVersion,
      ...this.limits,
      String(this.historyDepth),
      String(this.feedMaxLength),
      oneLine(command),
      oneLine(session),
      deltaBase,
      delta,
      String(this.historyMaxBytes),
      this.fenceArgument,
    ];
    const reply = await this.run(command, path, () => this.sendWrite(content, keys, args));
    if (reply[0] === ScriptStatus.ok) {
      // The write script sets the access time too.
      this.accessRecords.record(path, String(reply[1]), sentAt);
    }
    return reply;
  }

  /**
   * Sends a write in one round trip. Content below `STAGED_FROM_CHARS` is the script's last
   * argument. Larger content is SETEX'd, behind a blank header, into this write's own stage key,
   * sent right before the script, which writes the version into the header and renames the stage
   * to the body: a Lua argument costs Redis about 1.2 us per KB (120 us at 100 KB, more than the
   * write itself), a plain command argument next to nothing (docs/benchmarks/redis.md).
   *
   * The script is sent by its SHA. If Redis does not know it (SCRIPT FLUSH, a new node) it did not
   * run (a stage is still there), so it is sent again, once, with its source.
   */
  private async sendWrite(content: string, keys: string[], args: string[]): Promise<unknown[]> {
    const script = defineScripts.script('batonMemoryWrite');
    const staged = content.length >= STAGED_FROM_CHARS;
    const scriptArgs = staged ? args : [...args, content];
    // The SETEX and the script are both written to the connection before either answer arrives,
    // in this order (one round trip); not as a pipeline object, which copies the body once more.
    const staging = staged
      ? this.client.setex(keys[3] ?? '', STAGE_TTL_SECONDS, stagedBody(content)).then(
          () => undefined,
          (error: unknown) => error,
        )
      : undefined;
    const [error, reply] = await this.client
      .evalsha(script.sha, keys.length, ...keys, ...scriptArgs)
      .then(
        (answer): [null, unknown] => [null, answer],
        (failure: Error): [Error, undefined] => [failure, undefined],
      );
    const stagingError = await staging;
    if (stagingError !== undefined) {
      throw stagingError;
    }
    if (!error) {
      return reply as unknown[];
    }
    if (!error.message.startsWith('NOSCRIPT')) {
      throw error;
    }
    return (await this.client.eval(script.lua, keys.length, ...keys, ...scriptArgs)) as unknown[];
  }

  private async run<Reply>(
    action: string,
    path: string,
    call: () => Promise<Reply>,
  ): Promise<Reply> {
    this.ensureOpen();
    let reply: Reply;
    try {
      reply = await call();
    } catch (error) {
      throw toStoreError(error, path === '' ? action : `${action} ${path}`);
    }
    if (Array.isArray(reply) && Number(reply[0]) === ScriptStatus.fenced) {
      this.fence?.onFenced?.();
      throw statusError(ScriptStatus.fenced, path);
    }
    return reply;
  }

  /** The fencing token every mutation presents (`''`: unfenced). */
  private get fenceArgument(): string {
    return this.fence === undefined ? '' : String(this.fence.token);
  }

  /**
   * Raises the namespace's fence to this store's token before its session writes anything, so
   * the session it replaced is refused from now on, even before this one's first write. Throws
   * like a refused write if a newer session already holds the namespace. No-op when unfenced.
   */
  async claimFence(): Promise<void> {
    if (this.fence === undefined) return;
    await this.run('claim', '', () =>
      this.client.batonMemoryFence(this.keys.meta, String(this.fence?.token ?? '')),
    );
  }

  /** The current version (kind 'f') then the older ones, newest first, read atomically. */
  private async loadHistory(path: string, withContent = true): Promise<HistoryEntry[]> {
    assertStorePath(path);
    this.ensureOpen();
    if (path === '' || this.historyDepth === 0) {
      return [];
    }
    let body: string | null;
    let file: Array<string | null>;
    let entries: string[];
    try {
      // A file written before bodies had keys of their own still has 'c' and 'v' in its hash.
      const replies = await this.client
        .multi()
        .get(this.keys.body(path))
        .hmget(this.keys.file(path), 'm', 'c', 'v')
        .lrange(this.keys.history(path), 0, Math.max(0, this.historyDepth - 2))
        .exec();
      const [bodyReply, fileReply, listReply] = replies ?? [];
      const error = bodyReply?.[0] ?? fileReply?.[0] ?? listReply?.[0];
      if (error) {
        throw error;
      }
      body = bodyReply?.[1] as string | null;
      file = fileReply?.[1] as Array<string | null>;
      entries = listReply?.[1] as string[];
    } catch (error) {
      throw toStoreError(error, `read the history of ${path}`);
    }
    const [header, legacyContent, legacyVersion] = file;
    const current =
      body !== null
        ? parseBody(body)
        : typeof legacyContent === 'string' && typeof legacyVersion === 'string'
          ? { content: legacyContent, version: legacyVersion }
          : undefined;
    if (current === undefined || typeof header !== 'string') {
      return [];
    }
    const history = [
      parseHistoryEntry(`${current.version}\n${header}\nf\n${current.content}`),
      ...entries.map(parseHistoryEntry),
    ];
    return this.withKeptContent(path, history, withContent);
  }

  /**
   * Fills in the content of the versions kept whole in keys of their own (kind 'k'), or with
   * `withContent` false only checks they are still there. A write between the two reads may have
   * dropped some of them: the history then ends before the first one missing, as if it had been
   * trimmed a moment earlier.
   */
  private async withKeptContent(
    path: string,
    history: HistoryEntry[],
    withContent: boolean,
  ): Promise<HistoryEntry[]> {
    const kept = history.filter((entry) => entry.kind === 'k');
    if (kept.length === 0) {
      return history;
    }
    let contents: Array<string | null>;
    try {
      const pipeline = this.client.pipeline();
      for (const entry of kept) {
        if (withContent) {
          pipeline.get(this.keys.kept(entry.version));
        } else {
          pipeline.exists(this.keys.kept(entry.version));
        }
      }
      const replies = (await pipeline.exec()) ?? [];
      contents = replies.map(([error, value]) => {
        if (error) {
          throw error;
        }
        if (!withContent) {
          return value === 1 ? '' : null;
        }
        return typeof value === 'string' ? parseBody(value).content : null;
      });
    } catch (error) {
      throw toStoreError(error, `read the history of ${path}`);
    }
    const complete: HistoryEntry[] = [];
    let next = 0;
    for (const entry of history) {
      if (entry.kind === 'k') {
        const payload = contents[next];
        next += 1;
        if (payload === null || payload === undefined) {
          break;
        }
        complete.push({ ...entry, kind: 'f', payload });
      } else {
        complete.push(entry);
      }
    }
    return complete;
  }

  private remember(path: string, versioned: Versioned): void {
    this.uncache(path);
    const size = versioned.content.length;
    if (this.editCacheEntries === 0 || size > this.editCacheChars / 4) {
      return;
    }
    this.recent.set(path, versioned);
    this.cachedChars += size;
    // Map iteration order is insertion order: the first key is the least recently stored.
    while (this.recent.size > this.editCacheEntries || this.cachedChars > this.editCacheChars) {
      const oldest = this.recent.keys().next();
      if (oldest.done === true) break;
      this.uncache(oldest.value);
    }
  }

  private uncache(path: string): void {
    const cached = this.recent.get(path);
    if (cached !== undefined) {
      this.cachedChars -= cached.content.length;
      this.recent.delete(path);
    }
  }

  /** Drops cached versions and access records of `path` and everything below it (deleted or moved). */
  private forget(path: string): void {
    this.accessRecords.forget(path);
    const below = `${path}/`;
    for (const cached of this.recent.keys()) {
      if (cached === path || cached.startsWith(below)) {
        this.uncache(cached);
      }
    }
  }

  private ensureOpen(): void {
    if (this.closed) {
      throw new StoreError('unavailable', 'The Redis memory store is closed.');
    }
  }
}

/** Creates a `RedisMemoryStore`. See `RedisMemoryStoreOptions`. */
export function createRedisMemoryStore(options: RedisMemoryStoreOptions): RedisMemoryStore {
  return new RedisMemoryStore(options);
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

function splitPath(path: string): [string, string] {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? ['', path] : [path.slice(0, slash), path.slice(slash + 1)];
}

/** Parses a directory-index value: `f,<size>,<mtime>` or `d,<mtime>`. */
function parseIndexValue(value: string): EntryStat {
  if (value.charCodeAt(0) === 102 /* 'f' */) {
    const comma = value.indexOf(',', 2);
    return {
      kind: 'file',
      size: Number(value.slice(2, comma)),
      modifiedAt: Number(value.slice(comma + 1)),
    };
  }
  return { kind: 'directory', size: DIRECTORY_SIZE, modifiedAt: Number(value.slice(2)) };
}

/** Feed and history headers are newline-separated: keep free-text fields on one line. */
function oneLine(value: string | undefined): string {
  return value === undefined ? '' : value.replace(/[\r\n]+/gu, ' ');
}

/**
 * A kept version: its payload is the full content ('f'), a reverse delta ('d'), or nothing yet
 * ('k': the content is in the version's own key, see `withKeptContent`).
 */
interface HistoryEntry extends FileVersion {
  kind: 'f' | 'd' | 'k';
  payload: string;
}

/**
 * The staged body of a large write: the blank header, then the content. Memory files are mostly
 * ASCII, and for ASCII text Latin-1 gives the same bytes as UTF-8 with a plain copy into one
 * buffer, which ioredis writes as it is: a 100 KB SETEX takes 0.128-0.130 ms p50 this way against
 * 0.161 ms for the header and content as one string (built, flattened and encoded again) and
 * 0.142 ms for the content alone. Anything else goes as a string, encoded as UTF-8.
 */
function stagedBody(content: string): Buffer | string {
  if (Buffer.byteLength(content, 'utf8') !== content.length) {
    return BLANK_HEADER + content;
  }
  const body = Buffer.allocUnsafe(BODY_HEADER_BYTES + content.length);
  body.write(BLANK_HEADER, 0, 'latin1');
  body.write(content, BODY_HEADER_BYTES, 'latin1');
  return body;
}

/** A body (or a kept version): its version padded to `BODY_HEADER_BYTES`, then the content. */
function parseBody(body: string): Versioned {
  // The header is ASCII, so its bytes and its UTF-16 code units line up.
  return {
    version: body.slice(0, BODY_HEADER_BYTES).trimEnd(),
    content: body.slice(BODY_HEADER_BYTES),
  };
}

/** Parses `<version>\n<at>\n<bytes>\n<command>\n<session>\n<kind>\n<payload>` (see write-4.lua). */
function parseHistoryEntry(entry: string): HistoryEntry {
  const lines: string[] = [];
  let offset = 0;
  for (let index = 0; index < 6; index += 1) {
    const end = entry.indexOf('\n', offset);
    lines.push(entry.slice(offset, end));
    offset = end + 1;
  }
  const [version, at, bytes, command, session, kind] = lines;
  return {
    version: version ?? '',
    at: Number(at),
    bytes: Number(bytes),
    command: command ?? '',
    ...(session ? { session } : {}),
    kind: kind === 'd' || kind === 'k' ? kind : 'f',
    payload: entry.slice(offset),
  };
}

function parseChange(id: string, fields: string[]): RedisMemoryChange {
  const values = new Map<string, string>();
  for (let index = 0; index + 1 < fields.length; index += 2) {
    values.set(fields[index] ?? '', fields[index + 1] ?? '');
  }
  const newPath = values.get('newPath');
  const session = values.get('session');
  return {
    id,
    at: Number(values.get('at')),
    command: values.get('command') ?? '',
    path: values.get('path') ?? '',
    ...(newPath === undefined ? {} : { newPath }),
    bytes: Number(values.get('bytes') ?? 0),
    ...(session === undefined ? {} : { session }),
  };
}
