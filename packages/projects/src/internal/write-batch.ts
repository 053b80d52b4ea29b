import { ProjectError } from '../errors.js';
import type { BatonKeys } from '../keys.js';
import type { RedisClient } from '@baton/storage-redis';
import { execPipeline, scriptPipeline } from './pipeline.js';
import { retryRefused } from './refused-retry.js';
import { scripts } from './scripts.js';
import { SCRIPT_STATUS } from './status.js';

/**
 * The writes one step of a project's record makes (a session's start or end, a checkpoint, an
 * event), queued and then sent together. Two kinds: a plain pipeline, and a fenced batch that
 * Redis applies only while the writer still holds the project's lease (fenced-batch-1.lua).
 */
export interface WriteBatch {
  hset(key: string, ...fieldsAndValues: (string | number)[]): void;
  hincrby(key: string, field: string, by: number): void;
  hincrbyfloat(key: string, field: string, by: number): void;
  hdel(key: string, field: string): void;
  rpush(key: string, value: string): void;
  ltrim(key: string, start: number, stop: number): void;
  xadd(key: string, ...values: (string | number)[]): void;
  zadd(key: string, score: number, member: string): void;
  zrem(key: string, ...members: string[]): void;
  del(...keys: string[]): void;
  /** Records in the change feed that `projectId` changed (touch-project-2.lua). */
  touch(projectId: string): void;
  /** Sends the writes; resolves with one reply per write. Throws `ProjectError('fenced')` when refused. */
  exec(): Promise<unknown[]>;
}

/** A writer's hold on a project: its lease's fencing token. */
export interface ProjectFence {
  /** The lease's fencing token (`ProjectLease.fence`). */
  token: number;
  /** Called when Redis refused a write because the lease moved on. Must not throw. */
  onFenced?: (() => void) | undefined;
}

type Write = (string | number)[];

/** Sends a batch's queued writes, in order; resolves with one reply per write. */
type Send = (writes: readonly Write[]) => Promise<unknown[]>;

/** Queues writes as commands; `send` gets them in order. */
class QueuedBatch implements WriteBatch {
  readonly #writes: Write[] = [];
  readonly #keys: BatonKeys;
  readonly #send: Send;
  constructor(keys: BatonKeys, send: Send) {
    this.#keys = keys;
    this.#send = send;
  }
  hset(key: string, ...fieldsAndValues: (string | number)[]): void {
    this.#writes.push(['HSET', key, ...fieldsAndValues]);
  }
  hincrby(key: string, field: string, by: number): void {
    this.#writes.push(['HINCRBY', key, field, by]);
  }
  hincrbyfloat(key: string, field: string, by: number): void {
    this.#writes.push(['HINCRBYFLOAT', key, field, by]);
  }
  hdel(key: string, field: string): void {
    this.#writes.push(['HDEL', key, field]);
  }
  rpush(key: string, value: string): void {
    this.#writes.push(['RPUSH', key, value]);
  }
  ltrim(key: string, start: number, stop: number): void {
    this.#writes.push(['LTRIM', key, start, stop]);
  }
  xadd(key: string, ...values: (string | number)[]): void {
    this.#writes.push(['XADD', key, ...values]);
  }
  zadd(key: string, score: number, member: string): void {
    this.#writes.push(['ZADD', key, score, member]);
  }
  zrem(key: string, ...members: string[]): void {
    this.#writes.push(['ZREM', key, ...members]);
  }
  del(...keys: string[]): void {
    this.#writes.push(['DEL', ...keys]);
  }
  touch(projectId: string): void {
    this.#writes.push(['TOUCH', this.#keys.projectChanges, this.#keys.projectVersion, projectId]);
  }
  exec(): Promise<unknown[]> {
    return this.#send(this.#writes);
  }
}

/** Sends the writes as one plain pipeline. */
function sendPipeline(redis: RedisClient): Send {
  return async (writes) => {
    const pipeline = scriptPipeline(redis);
    for (const [command, ...rest] of writes) {
      if (command === 'TOUCH') {
        const [changes, version, projectId] = rest as [string, string, string];
        scripts.queue(pipeline, 'touchProject', changes, version, projectId);
      } else {
        void pipeline.call(String(command), ...rest);
      }
    }
    return execPipeline(pipeline);
  };
}

/** Sends the writes as one fenced batch, applied only while `fence` still holds the lease. */
function sendFenced(
  redis: RedisClient,
  keys: BatonKeys,
  projectId: string,
  fence: ProjectFence,
): Send {
  return async (writes) => {
    // A script Redis refused (full, read-only) applied nothing: sending it again is safe.
    const reply = (await retryRefused(() =>
      scripts.call(
        redis,
        'fencedBatch',
        keys.lease(projectId),
        String(fence.token),
        JSON.stringify(writes.map((write) => write.map(String))),
      ),
    )) as unknown[];
    if (reply[0] !== SCRIPT_STATUS.owned) {
      fence.onFenced?.();
      throw fencedError(projectId);
    }
    return reply.slice(1);
  };
}

/** The error every refused fenced write throws. */
export function fencedError(projectId: string): ProjectError {
  return new ProjectError(
    'fenced',
    `this session no longer holds project ${projectId} (its lease moved on); nothing was written`,
  );
}

/** A batch for `projectId`: fenced when `fence` is given, a plain pipeline otherwise. */
export function writeBatch(
  redis: RedisClient,
  keys: BatonKeys,
  projectId: string,
  fence: ProjectFence | undefined,
): WriteBatch {
  return new QueuedBatch(
    keys,
    fence === undefined ? sendPipeline(redis) : sendFenced(redis, keys, projectId, fence),
  );
}
