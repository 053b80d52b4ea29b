/**
 * Reading a project's event stream through the control API: the argument checks (one readable
 * `invalid_input` line each) and the follow loop on a blocking connection of its own.
 */
import { ProjectError } from '../errors.js';
import type { EventEntry } from '../events.js';
import type { WaitForEventsOptions } from '../internal/event-waiter.js';
import type { BatonKeys } from '../keys.js';
import type { ProjectRepository, ReadEventsOptions } from '../project-repository.js';
import { duplicateConnection, type RedisClient } from '@baton/storage-redis';
import { STREAM_ID_PATTERN } from '../requests.js';
import { checkProjectId } from '../project.js';
import type { FollowEventsOptions } from './control-api.js';

/** Refuses read options that do not go together or are out of range. */
export function checkReadEventsOptions(readOptions: ReadEventsOptions): void {
  if (readOptions.last !== undefined) {
    if (!Number.isSafeInteger(readOptions.last) || readOptions.last < 1) {
      throw new ProjectError(
        'invalid_input',
        `last must be an integer >= 1, got ${readOptions.last}`,
      );
    }
    if (readOptions.fromId !== undefined || readOptions.blockMs !== undefined) {
      throw new ProjectError('invalid_input', 'last reads backwards: give no fromId or blockMs');
    }
  }
  if (readOptions.beforeId !== undefined) {
    if (readOptions.last === undefined) {
      throw new ProjectError('invalid_input', 'beforeId pages backwards: give last with it');
    }
    if (!STREAM_ID_PATTERN.test(readOptions.beforeId)) {
      throw new ProjectError(
        'invalid_input',
        `invalid stream id ${JSON.stringify(readOptions.beforeId)}`,
      );
    }
  }
}

/** Refuses cursors that are not stream ids and a wait that is out of range. */
export function checkWaitArguments(
  cursors: Record<string, string>,
  waitOptions: WaitForEventsOptions,
): void {
  for (const [projectId, cursor] of Object.entries(cursors)) {
    checkProjectId(projectId);
    if (typeof cursor !== 'string' || !STREAM_ID_PATTERN.test(cursor)) {
      throw new ProjectError(
        'invalid_input',
        `invalid stream id ${JSON.stringify(cursor)} for project ${projectId}`,
      );
    }
  }
  const { blockMs, count } = waitOptions;
  if (!Number.isSafeInteger(blockMs) || blockMs < 0) {
    throw new ProjectError('invalid_input', `blockMs must be an integer >= 0, got ${blockMs}`);
  }
  if (count !== undefined && (!Number.isSafeInteger(count) || count < 1)) {
    throw new ProjectError('invalid_input', `count must be an integer >= 1, got ${count}`);
  }
}

/** What the follow loop needs of the control it runs in. */
export interface FollowContext {
  redis: RedisClient;
  keys: BatonKeys;
  repository: ProjectRepository;
  /** Open follow connections, closed by the control's `close()`. */
  followers: Set<RedisClient>;
  /** Waits for Redis (or fails with `redis_unreachable`). */
  ready: () => Promise<void>;
}

/**
 * The project's events after `fromId` and then as they come, read with XREAD BLOCK on a
 * connection of its own until `signal` aborts.
 */
export function followProjectEvents(
  context: FollowContext,
  projectId: string,
  followOptions: FollowEventsOptions,
): AsyncIterable<EventEntry> {
  const { redis, keys, repository, followers, ready } = context;
  return {
    async *[Symbol.asyncIterator]() {
      await ready();
      const blocking = duplicateConnection(redis, {
        maxRetriesPerRequest: null,
        enableOfflineQueue: true,
      });
      blocking.on('error', () => undefined);
      followers.add(blocking);
      const signal = followOptions.signal;
      const stop = () => blocking.disconnect();
      signal?.addEventListener('abort', stop, { once: true });
      let fromId = followOptions.fromId ?? '0-0';
      try {
        if (fromId === '$') {
          const last = (await redis.xrevrange(keys.events(projectId), '+', '-', 'COUNT', 1)) as [
            string,
            string[],
          ][];
          fromId = last[0]?.[0] ?? '0-0';
        }
        while (!signal?.aborted) {
          let entries: EventEntry[];
          try {
            entries = await repository.readEvents(
              projectId,
              {
                fromId,
                count: followOptions.count ?? 100,
                blockMs: followOptions.blockMs ?? 5000,
              },
              blocking,
            );
          } catch (error) {
            if (signal?.aborted) return;
            throw error;
          }
          for (const entry of entries) {
            fromId = entry.id;
            yield entry;
          }
        }
      } finally {
        signal?.removeEventListener('abort', stop);
        followers.delete(blocking);
        blocking.disconnect();
      }
    },
  };
}
