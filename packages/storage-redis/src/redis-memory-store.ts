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
  type StoreUsage,
  type WriteOptions,
} from '@baton/core';
// assertStorePath also refuses NUL, which separates entries in the list script's reply.
import { assertStorePath, DIRECTORY_SIZE, isHiddenName } from '@baton/core/store-kit';
import { AccessRecords } from './internal/access-records.js';
import { EditCache } from './internal/edit-cache.js';
import { createReverseDelta } from './internal/history-delta.js';
import { MemoryHistory } from './internal/history.js';
import {
  oneLine,
  parseBody,
  parseIndexValue,
  splitPath,
  type FileVersion,
  type RedisMemoryChange,
  type Versioned,
} from './internal/records.js';
import { scripts } from './internal/scripts.js';
import { MAX_DELTA_SENT, sendWrite } from './internal/send-write.js';
import { readChanges, sweepInBatches } from './internal/change-feed.js';
import { ScriptStatus, statusError, toStoreError } from './internal/status.js';
import { createNamespaceKeys, DEFAULT_KEY_PREFIX, type NamespaceKeys } from './keys.js';
import { closeRedisConnection, type RedisClient } from './redis-connection.js';
import {
  openConnection,
  resolveStoreSettings,
  type MemoryFence,
  type ReadChangesOptions,
  type RedisMemoryStoreOptions,
  type SweepOptions,
  type StoreSettings,
  type SweepResult,
} from './memory-store-options.js';

export { DEFAULT_CONNECTION_OPTIONS } from './memory-store-options.js';
export type {
  MemoryFence,
  ReadChangesOptions,
  RedisMemoryStoreOptions,
  SweepOptions,
  SweepResult,
} from './memory-store-options.js';
export type { FileVersion, RedisMemoryChange } from './internal/records.js';

/**
 * `MemoryStore` on Redis: one namespace per store, every mutation one atomic Lua script.
 * See docs/operations.md for the key schema and the Redis settings it needs.
 */
export class RedisMemoryStore implements MemoryStore {
  /** The namespace this store serves. */
  readonly namespace: string;
  /** The keys of the namespace. */
  readonly keys: NamespaceKeys;
  readonly #client: RedisClient;
  readonly #ownsClient: boolean;
  /** Checked numeric options (history, feed, edit retries, limits). */
  readonly #settings: StoreSettings;
  readonly #prefixes: readonly [string, string, string, string, string];
  /** Makes this store's write stage keys unique: `<stageId>:<writes>`. */
  readonly #stageId = randomBytes(6).toString('hex');
  #writes = 0;
  /** path -> last version this store saw. */
  readonly #editCache: EditCache;
  readonly #history: MemoryHistory;
  /** When this store last had Redis record each path's access time. */
  readonly #accessRecords: AccessRecords;
  #closed = false;
  readonly #fence: MemoryFence | undefined;

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
    this.#fence = options.fence;
    this.keys = createNamespaceKeys(options.namespace, options.prefix ?? DEFAULT_KEY_PREFIX);
    const settings = resolveStoreSettings(options);
    this.#settings = settings;
    this.#editCache = new EditCache(settings.editCacheEntries, settings.editCacheChars);
    this.#accessRecords = new AccessRecords(settings.accessTimeGranularityMs);
    this.#prefixes = [
      this.keys.childrenPrefix,
      this.keys.filePrefix,
      this.keys.historyPrefix,
      this.keys.keptPrefix,
      this.keys.bodyPrefix,
    ];
    this.#ownsClient = options.redis === undefined;
    this.#client = options.redis ?? openConnection(options.url ?? '', options.redisOptions);
    this.#history = new MemoryHistory(this.#client, this.keys, this.#settings.historyDepth);
  }

  /** The ioredis client the store runs on (for health checks and tooling). */
  get redis(): RedisClient {
    return this.#client;
  }

  async read(path: string): Promise<string | null> {
    // The steady state of a file read again within the access-time granularity, inline: one
    // GET of the body and no further async layers (a view is one GET round trip plus this).
    const recordedVersion = path === '' ? undefined : this.#accessRecords.recentVersion(path);
    if (recordedVersion !== undefined) {
      assertStorePath(path);
      this.#ensureOpen();
      let body: string | null;
      try {
        body = await this.#client.get(this.keys.body(path));
      } catch (error) {
        throw toStoreError(error, `read ${path}`);
      }
      const read = body === null ? undefined : parseBody(body);
      if (read !== undefined && read.version === recordedVersion) {
        this.#editCache.remember(path, read);
        return read.content;
      }
      // Gone or rewritten elsewhere: the script reads it and records the access.
      this.#accessRecords.drop(path);
    }
    return (await this.#readVersioned(path, 'read'))?.content ?? null;
  }

  async stat(path: string): Promise<EntryStat | null> {
    assertStorePath(path);
    this.#ensureOpen();
    try {
      if (path === '') {
        const modified = await this.#client.hget(this.keys.meta, 'rootm');
        return {
          kind: 'directory',
          size: DIRECTORY_SIZE,
          modifiedAt: modified === null ? 0 : Number(modified),
        };
      }
      const [parent, name] = splitPath(path);
      const value = await this.#client.hget(this.keys.children(parent), name);
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
    const reply = await this.#runWrite(
      path,
      content,
      options.mode,
      '',
      command,
      options.session,
      options.mode === 'create' ? undefined : this.#editCache.get(path),
    );
    if (reply[0] !== ScriptStatus.ok) {
      throw statusError(Number(reply[0]), path, undefined, Number(reply[1]));
    }
    this.#editCache.remember(path, { content, version: String(reply[1]) });
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
    let current = this.#editCache.get(path) ?? null;
    let fromCache = current !== null;
    current ??= await this.#readVersioned(path, 'edit');
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
        this.#editCache.uncache(path);
        fromCache = false;
        current = await this.#readVersioned(path, 'edit');
        continue;
      }
      const reply = await this.#runWrite(
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
        this.#editCache.remember(path, { content: after, version: String(reply[1]) });
        return { before: current.content, after };
      }
      if (status !== ScriptStatus.conflict) {
        this.#editCache.uncache(path);
        throw statusError(status, path, undefined, Number(reply[1]));
      }
      current = parseBody(String(reply[2]));
      fromCache = false;
      if (attempt >= this.#settings.maxEditAttempts) {
        this.#editCache.uncache(path);
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
    const reply = await this.#run('list', path, () =>
      scripts.call(
        this.#client,
        'list',
        this.keys.meta,
        ...this.#prefixes,
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
    const reply = await this.#run('delete', path, () =>
      scripts.call(
        this.#client,
        'delete',
        this.keys.meta,
        this.keys.accessTimes,
        this.keys.feed,
        ...this.#prefixes,
        path,
        String(this.#settings.feedMaxLength),
        context.command ?? 'delete',
        oneLine(context.session),
        this.#fenceArgument,
      ),
    );
    this.#forget(path);
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
    const reply = await this.#run('rename', from, () =>
      scripts.call(
        this.#client,
        'rename',
        this.keys.meta,
        this.keys.accessTimes,
        this.keys.feed,
        ...this.#prefixes,
        from,
        to,
        String(this.#settings.feedMaxLength),
        context.command ?? 'rename',
        oneLine(context.session),
        this.#fenceArgument,
      ),
    );
    if (reply[0] !== ScriptStatus.ok) {
      throw statusError(Number(reply[0]), from, to);
    }
    this.#forget(from);
    // A moved file keeps its access time, which may be older than this store's record of `to`.
    this.#forget(to);
  }

  async usage(): Promise<StoreUsage> {
    this.#ensureOpen();
    try {
      const [bytes, files] = await this.#client.hmget(this.keys.meta, 'bytes', 'files');
      return { bytes: Number(bytes ?? 0), files: Number(files ?? 0) };
    } catch (error) {
      throw toStoreError(error, 'read usage');
    }
  }

  /** Closes the connection if the store opened it; a client passed in stays open. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    if (this.#ownsClient) {
      // One that never became ready is destroyed: quit() would wait 2 s for a socket long gone.
      if (this.#client.status !== 'ready') closeRedisConnection(this.#client);
      else await this.#client.quit().catch(() => closeRedisConnection(this.#client));
    }
  }

  /**
   * Versions kept for `path`, newest (the current content) first. Empty if there is no file or
   * history is off (then only while the file exists is its current version listed).
   */
  async listHistory(path: string): Promise<FileVersion[]> {
    this.#ensureOpen();
    return this.#history.versions(path);
  }

  /** Content of `path` at `version` (from `listHistory`), or `null` if that version is not kept. */
  async readHistory(path: string, version: string): Promise<string | null> {
    this.#ensureOpen();
    return this.#history.contentAt(path, version);
  }

  /** Change-feed entries, oldest first. */
  async readChanges(options: ReadChangesOptions = {}): Promise<RedisMemoryChange[]> {
    this.#ensureOpen();
    return readChanges(this.#client, this.keys.feed, options);
  }

  /**
   * Removes files not read or written for `olderThanMs` (or since `accessedBefore`; both by the
   * Redis server clock; reads show up with a lag of up to `accessTimeGranularityMs`), in atomic
   * batches, until none is left. Safe to run while others write: a file touched after the
   * batch ran is kept; one removed before a write is simply created again by it.
   */
  async sweepExpired(options: SweepOptions): Promise<SweepResult> {
    return sweepInBatches(
      { ...options, feedMaxLength: this.#settings.feedMaxLength },
      async (batchArguments) => {
        const reply = await this.#run('sweep expired files', '', () =>
          scripts.call(
            this.#client,
            'sweep',
            this.keys.meta,
            this.keys.accessTimes,
            this.keys.feed,
            ...this.#prefixes,
            ...batchArguments,
          ),
        );
        const paths = reply.slice(1).map(String);
        for (const path of paths) this.#accessRecords.drop(path);
        return paths;
      },
    );
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
      await this.#client.del(this.keys.meta, this.keys.accessTimes, this.keys.feed);
    } catch (error) {
      throw toStoreError(error, 'clear the namespace');
    }
    this.#accessRecords.clear();
  }

  async #readVersioned(path: string, action: string): Promise<Versioned | null> {
    assertStorePath(path);
    if (path === '') {
      throw new StoreError('is_directory', 'The root is a directory.');
    }
    const recordedVersion = this.#accessRecords.recentVersion(path);
    if (recordedVersion !== undefined) {
      const read = await this.#readWithoutRecording(path, action, recordedVersion);
      if (read !== 'record') {
        return read;
      }
    }
    const sentAt = performance.now();
    const reply = await this.#run(action, path, () =>
      scripts.call(this.#client, 'read', this.keys.accessTimes, ...this.#prefixes, path),
    );
    const status = Number(reply[0]);
    if (status === ScriptStatus.ok) {
      const versioned = parseBody(String(reply[1]));
      this.#editCache.remember(path, versioned);
      this.#accessRecords.record(path, versioned.version, sentAt);
      return versioned;
    }
    this.#editCache.uncache(path);
    if (status === ScriptStatus.notFound) {
      return null;
    }
    throw statusError(status, path);
  }

  /**
   * The read of a path whose access this store recorded less than the granularity ago: one plain
   * `GET` of the body, which starts with its version (no script, no access-time write). Returns
   * `'record'` when the file is not there (the script then answers not found or is_directory from
   * the index) or has another version than the recorded one (written, or moved here with an older
   * access time, by another store), so the caller reads it with the script. Only `GET`, not also the parent's index entry: two commands
   * sent back-to-back cost about two round trips on a fast loopback.
   */
  async #readWithoutRecording(
    path: string,
    action: string,
    recordedVersion: string,
  ): Promise<Versioned | 'record'> {
    const body = await this.#run(action, path, () => this.#client.get(this.keys.body(path)));
    const versioned = body === null ? undefined : parseBody(body);
    if (versioned === undefined || versioned.version !== recordedVersion) {
      this.#accessRecords.drop(path);
      return 'record';
    }
    this.#editCache.remember(path, versioned);
    return versioned;
  }

  async #runWrite(
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
    if (this.#settings.historyDepth > 1 && replaced !== undefined) {
      const candidate = createReverseDelta(replaced.content, content);
      if (candidate.length <= MAX_DELTA_SENT) {
        deltaBase = replaced.version;
        delta = candidate;
      }
    }
    this.#writes += 1;
    const stage = this.keys.writeStage(`${this.#stageId}:${this.#writes}`);
    const keys = [this.keys.meta, this.keys.accessTimes, this.keys.feed, stage];
    const args = [
      ...this.#prefixes,
      path,
      mode,
      expectedVersion,
      ...this.#settings.limits,
      String(this.#settings.historyDepth),
      String(this.#settings.feedMaxLength),
      oneLine(command),
      oneLine(session),
      deltaBase,
      delta,
      String(this.#settings.historyMaxBytes),
      this.#fenceArgument,
    ];
    const reply = await this.#run(command, path, () =>
      sendWrite(this.#client, content, keys, args),
    );
    if (reply[0] === ScriptStatus.ok) {
      // The write script sets the access time too.
      this.#accessRecords.record(path, String(reply[1]), sentAt);
    }
    return reply;
  }

  async #run<Reply>(action: string, path: string, call: () => Promise<Reply>): Promise<Reply> {
    this.#ensureOpen();
    let reply: Reply;
    try {
      reply = await call();
    } catch (error) {
      throw toStoreError(error, path === '' ? action : `${action} ${path}`);
    }
    if (Array.isArray(reply) && Number(reply[0]) === ScriptStatus.fenced) {
      this.#fence?.onFenced?.();
      throw statusError(ScriptStatus.fenced, path);
    }
    return reply;
  }

  /** The fencing token every mutation presents (`''`: unfenced). */
  get #fenceArgument(): string {
    return this.#fence === undefined ? '' : String(this.#fence.token);
  }

  /**
   * Raises the namespace's fence to this store's token before its session writes anything, so
   * the session it replaced is refused from now on, even before this one's first write. Throws
   * like a refused write if a newer session already holds the namespace. No-op when unfenced.
   */
  async claimFence(): Promise<void> {
    if (this.#fence === undefined) return;
    await this.#run('claim', '', () =>
      scripts.call(this.#client, 'fence', this.keys.meta, String(this.#fence?.token ?? '')),
    );
  }

  /** Drops cached versions and access records of `path` and everything below it (deleted or moved). */
  #forget(path: string): void {
    this.#accessRecords.forget(path);
    this.#editCache.forgetBelow(path);
  }

  #ensureOpen(): void {
    if (this.#closed) {
      throw new StoreError('unavailable', 'The Redis memory store is closed.');
    }
  }
}

/** Creates a `RedisMemoryStore`. See `RedisMemoryStoreOptions`. */
export function createRedisMemoryStore(options: RedisMemoryStoreOptions): RedisMemoryStore {
  return new RedisMemoryStore(options);
}
