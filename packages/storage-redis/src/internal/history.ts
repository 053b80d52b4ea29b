import { assertStorePath } from '@baton/core/store-kit';
import type { NamespaceKeys } from '../keys.js';
import type { RedisClient } from '../redis-connection.js';
import { applyReverseDelta } from './history-delta.js';
import { parseBody, type FileVersion } from './records.js';
import { toStoreError } from './status.js';

/**
 * A kept version: its payload is the full content ('f'), a reverse delta ('d'), or nothing yet
 * ('k': the content is in the version's own key, see `withKeptContent`).
 */
export interface HistoryEntry extends FileVersion {
  kind: 'f' | 'd' | 'k';
  payload: string;
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

/**
 * A file's kept versions: the newest in its body, older ones in a capped list as reverse deltas or
 * whole (in keys of their own when large), all written by the write script and read here.
 */
export class MemoryHistory {
  readonly #client: RedisClient;
  readonly #keys: NamespaceKeys;
  readonly #depth: number;

  constructor(client: RedisClient, keys: NamespaceKeys, depth: number) {
    this.#client = client;
    this.#keys = keys;
    this.#depth = depth;
  }

  /**
   * Versions kept for `path`, newest (the current content) first. Empty if there is no file or
   * history is off.
   */
  async versions(path: string): Promise<FileVersion[]> {
    const history = await this.load(path, false);
    return history.map(({ payload: _payload, kind: _kind, ...version }) => version);
  }

  /** Content of `path` at `version`, or `null` if that version is not kept. */
  async contentAt(path: string, version: string): Promise<string | null> {
    const history = await this.load(path);
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

  /** The current version (kind 'f') then the older ones, newest first, read atomically. */
  async load(path: string, withContent = true): Promise<HistoryEntry[]> {
    assertStorePath(path);
    if (path === '' || this.#depth === 0) {
      return [];
    }
    let body: string | null;
    let header: string | null;
    let entries: string[];
    try {
      const replies = await this.#client
        .multi()
        .get(this.#keys.body(path))
        .hget(this.#keys.file(path), 'm')
        .lrange(this.#keys.history(path), 0, Math.max(0, this.#depth - 2))
        .exec();
      const [bodyReply, fileReply, listReply] = replies ?? [];
      const error = bodyReply?.[0] ?? fileReply?.[0] ?? listReply?.[0];
      if (error) {
        throw error;
      }
      body = bodyReply?.[1] as string | null;
      header = fileReply?.[1] as string | null;
      entries = listReply?.[1] as string[];
    } catch (error) {
      throw toStoreError(error, `read the history of ${path}`);
    }
    const current = body === null ? undefined : parseBody(body);
    if (current === undefined || typeof header !== 'string') {
      return [];
    }
    const history = [
      parseHistoryEntry(`${current.version}\n${header}\nf\n${current.content}`),
      ...entries.map(parseHistoryEntry),
    ];
    return this.#withKeptContent(path, history, withContent);
  }

  /**
   * Fills in the content of the versions kept whole in keys of their own (kind 'k'), or with
   * `withContent` false only checks they are still there. A write between the two reads may have
   * dropped some of them: the history then ends before the first one missing, as if it had been
   * trimmed a moment earlier.
   */
  async #withKeptContent(
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
      const pipeline = this.#client.pipeline();
      for (const entry of kept) {
        if (withContent) {
          pipeline.get(this.#keys.kept(entry.version));
        } else {
          pipeline.exists(this.#keys.kept(entry.version));
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
}
