/**
 * Following a project's event stream through the control API: blocking reads on a connection of
 * its own. The options arrive parsed (`followEventsRequestSchema`).
 */
import type { EventEntry } from '../events.js';
import type { BatonKeys } from '../keys.js';
import type { ProjectRepository, ReadEventsOptions } from '../project-repository.js';
import { closeRedisConnection, duplicateConnection, type RedisClient } from '@baton/storage-redis';
import type { FollowEventsOptions } from './control-api.js';

/** A read of the project's events; a blocking one (`blockMs`) on a connection of its own. */
export async function readProjectEvents(
  redis: RedisClient,
  repository: ProjectRepository,
  projectId: string,
  read: ReadEventsOptions,
): Promise<EventEntry[]> {
  if (read.blockMs === undefined) return repository.readEvents(projectId, read);
  // A blocking read must not hold the shared connection.
  const blocking = duplicateConnection(redis, {
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
  });
  blocking.on('error', () => undefined);
  try {
    return await repository.readEvents(projectId, read, blocking);
  } finally {
    closeRedisConnection(blocking);
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
      const stop = () => closeRedisConnection(blocking);
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
        closeRedisConnection(blocking);
      }
    },
  };
}
