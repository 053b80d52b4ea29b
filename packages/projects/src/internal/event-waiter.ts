/**
 * Blocking multi-stream reads for `BatonControl.waitForEvents`.
 *
 * A blocked connection serves nobody else, so waits run on a connection of their own, duplicated
 * from the control's and kept for the next wait (a reader that waits in a loop reuses one
 * connection). A wait that overlaps another gets a second connection, closed when it ends.
 * Aborting a wait disconnects its connection: that is the only way to end an XREAD BLOCK at once.
 */
import { closeRedisConnection, duplicateConnection, type RedisClient } from '@baton/storage-redis';
import { ProjectError, describeError } from '../errors.js';
import type { EventEntry } from '../events.js';
import type { ProjectRepository } from '../project-repository.js';

export interface WaitForEventsOptions {
  /** Longest wait (ms) when no stream has entries after its cursor; 0 reads without waiting. */
  blockMs: number;
  /** Most entries returned per project. Default 100. */
  count?: number | undefined;
  /** Ends a pending wait early; it then resolves with `[]`. */
  signal?: AbortSignal | undefined;
}

/** New entries of one project, oldest first. */
export interface ProjectEvents {
  projectId: string;
  entries: EventEntry[];
}

export interface EventWaiterOptions {
  redis: RedisClient;
  repository: ProjectRepository;
  /** Extra time Redis gets to answer after `blockMs` before the wait fails with `redis_unreachable`. */
  graceMs: number;
}

export interface EventWaiter {
  wait(cursors: Record<string, string>, options: WaitForEventsOptions): Promise<ProjectEvents[]>;
  /** Disconnects every waiting connection; pending waits resolve with `[]`. */
  close(): void;
}

export function createEventWaiter(options: EventWaiterOptions): EventWaiter {
  const { redis, repository } = options;
  const connections = new Set<RedisClient>();
  let idle: RedisClient | undefined;
  let closed = false;

  function acquire(): RedisClient {
    const reused = idle;
    idle = undefined;
    if (reused !== undefined && reused.status !== 'end') return reused;
    const connection = duplicateConnection(redis, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
    });
    // Failures surface as rejected waits; the event only needs a listener.
    connection.on('error', () => undefined);
    connections.add(connection);
    return connection;
  }

  function discard(connection: RedisClient): void {
    connections.delete(connection);
    closeRedisConnection(connection);
  }

  return {
    async wait(cursors, waitOptions) {
      if (closed) throw new ProjectError('conflict', 'this control is closed');
      const count = waitOptions.count ?? 100;
      if (waitOptions.blockMs === 0) return repository.readEventsOfProjects(cursors, { count });
      const signal = waitOptions.signal;
      if (signal?.aborted) return [];
      const connection = acquire();
      let timedOut = false;
      const stop = () => closeRedisConnection(connection);
      // Without this bound a read sent while Redis is down could wait for its return.
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, waitOptions.blockMs + options.graceMs);
      signal?.addEventListener('abort', stop, { once: true });
      try {
        return await repository.readEventsOfProjects(
          cursors,
          { count, blockMs: waitOptions.blockMs },
          connection,
        );
      } catch (error) {
        if (closed || (signal?.aborted ?? false)) return [];
        if (timedOut) {
          throw new ProjectError(
            'redis_unreachable',
            `Redis did not answer a blocking read within ${waitOptions.blockMs + options.graceMs} ms`,
            { cause: error },
          );
        }
        throw new ProjectError(
          'redis_unreachable',
          `blocking read failed: ${describeError(error)}`,
          {
            cause: error,
          },
        );
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
        if (closed || timedOut || (signal?.aborted ?? false) || idle !== undefined) {
          discard(connection);
        } else {
          idle = connection;
        }
      }
    },

    close() {
      closed = true;
      idle = undefined;
      for (const connection of connections) closeRedisConnection(connection);
      connections.clear();
    },
  };
}
