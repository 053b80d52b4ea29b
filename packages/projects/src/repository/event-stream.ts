import { decodeProjectEventJson } from '../event-decoder.js';
import type { EventEntry, WorkerEvent } from '../events.js';
import type { WriteBatch } from '../internal/write-batch.js';
import type { BatonKeys } from '../keys.js';
import type { LoggedEvent } from '../project-log.js';
import type { RedisClient } from '@baton/storage-redis';

export interface ReadEventsOptions {
  /** Return entries strictly after this stream id. Default: from the beginning. */
  fromId?: string | undefined;
  /**
   * Return the newest `last` entries instead (oldest first), read backwards with XREVRANGE: the
   * cost is the entries returned, not the stream. Not with `fromId` or `blockMs`.
   */
  last?: number | undefined;
  /** With `last`: only entries strictly before this stream id (to page backwards). */
  beforeId?: string | undefined;
  /** Most entries returned. Default 100. */
  count?: number | undefined;
  /** Block up to this long for new entries when none are there yet (needs a connection that may block). */
  blockMs?: number | undefined;
}

/** Options of `ProjectEventStreams`. */
export interface ProjectEventStreamsOptions {
  redis: RedisClient;
  keys: BatonKeys;
  /** Approximate cap of each project's stream (XADD MAXLEN ~). */
  maxEvents: number;
}

/**
 * Each project's events as a capped Redis stream, one JSON field `e` per entry, decoded by the one
 * event decoder on every read.
 */
export class ProjectEventStreams {
  readonly #redis: RedisClient;
  readonly #keys: BatonKeys;
  readonly #maxEvents: number;

  constructor(options: ProjectEventStreamsOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#maxEvents = options.maxEvents;
  }

  /** Appends an event to the project's capped stream; returns its stream id. */
  async append(projectId: string, event: WorkerEvent | LoggedEvent): Promise<string> {
    const [key, ...rest] = this.#xadd(projectId, event);
    return (await this.#redis.xadd(key, ...rest)) ?? '';
  }

  /** `append` through `batch` (a session's fenced write); returns the stream id. */
  async appendIn(
    batch: WriteBatch,
    projectId: string,
    event: WorkerEvent | LoggedEvent,
  ): Promise<string> {
    const [key, ...rest] = this.#xadd(projectId, event);
    batch.xadd(key, ...rest);
    const [id] = await batch.exec();
    return typeof id === 'string' ? id : '';
  }

  /** The XADD of one event: the capped stream, an auto id, the JSON in field `e`. */
  #xadd(
    projectId: string,
    event: WorkerEvent | LoggedEvent,
  ): [string, 'MAXLEN', '~', number, '*', 'e', string] {
    return [
      this.#keys.events(projectId),
      'MAXLEN',
      '~',
      this.#maxEvents,
      '*',
      'e',
      JSON.stringify(event),
    ];
  }

  /**
   * Reads events after `fromId`. With `blockMs`, waits for new entries using XREAD BLOCK: give
   * it a connection of its own (a blocked connection serves nobody else).
   */
  async read(
    projectId: string,
    options: ReadEventsOptions = {},
    redis: RedisClient = this.#redis,
  ): Promise<EventEntry[]> {
    const count = options.count ?? 100;
    const key = this.#keys.events(projectId);
    if (options.last !== undefined) {
      const end = options.beforeId === undefined ? '+' : `(${options.beforeId}`;
      const entries = (await redis.xrevrange(key, end, '-', 'COUNT', options.last)) as [
        string,
        string[],
      ][];
      return parseEntries(entries.reverse());
    }
    if (options.blockMs !== undefined) {
      const reply = (await redis.xread(
        'COUNT',
        count,
        'BLOCK',
        options.blockMs,
        'STREAMS',
        key,
        options.fromId ?? '0-0',
      )) as [string, [string, string[]][]][] | null;
      return reply ? parseEntries(reply[0]?.[1] ?? []) : [];
    }
    const start = options.fromId ? `(${options.fromId}` : '-';
    const entries = (await redis.xrange(key, start, '+', 'COUNT', count)) as [string, string[]][];
    return parseEntries(entries);
  }

  /**
   * Reads events of several projects in one XREAD, after each project's cursor. With `blockMs`,
   * waits up to that long when none has new entries (give it a connection of its own). The keys
   * share the prefix's hash tag, so one XREAD over them is valid on Redis Cluster.
   */
  async readOfProjects(
    cursors: Record<string, string>,
    options: { count: number; blockMs?: number },
    redis: RedisClient = this.#redis,
  ): Promise<Array<{ projectId: string; entries: EventEntry[] }>> {
    const projectIds = Object.keys(cursors);
    if (projectIds.length === 0) return [];
    const byKey = new Map(projectIds.map((id) => [this.#keys.events(id), id]));
    const streams = [...byKey.keys(), ...projectIds.map((id) => cursors[id] ?? '0-0')];
    const reply = (
      options.blockMs === undefined
        ? await redis.xread('COUNT', options.count, 'STREAMS', ...streams)
        : await redis.xread('COUNT', options.count, 'BLOCK', options.blockMs, 'STREAMS', ...streams)
    ) as [string, [string, string[]][]][] | null;
    const result: Array<{ projectId: string; entries: EventEntry[] }> = [];
    for (const [key, entries] of reply ?? []) {
      const projectId = byKey.get(key);
      if (projectId !== undefined) result.push({ projectId, entries: parseEntries(entries) });
    }
    return result;
  }
}

function parseEntries(entries: [string, string[]][]): EventEntry[] {
  const result: EventEntry[] = [];
  for (const [id, fields] of entries) {
    const index = fields.indexOf('e');
    const raw = index >= 0 ? fields[index + 1] : undefined;
    // An entry without an event field is not one of ours; a malformed one decodes as unknown.
    if (raw === undefined) continue;
    result.push({ id, event: decodeProjectEventJson(raw) });
  }
  return result;
}
