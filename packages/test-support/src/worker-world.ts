import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { Closable } from './cli-world.js';
import { deletePrefix } from './delete-prefix.js';
import { randomHex } from './random-hex.js';
import { REDIS_URL } from './redis-url.js';
import { startRedisServer, type RedisServer, type RedisServerOptions } from './redis-server.js';

/** Where a test's worker parts live: what `open` gets to build them. */
export interface WorkerWorldTarget {
  /** The Redis the test uses: its private server's, or REDIS_URL. */
  readonly url: string;
  /** A fresh `{hash tag}` key prefix of the test's own. */
  readonly prefix: string;
  /** The test's own directory (its real path), removed after it: a BATON_HOME for its workers. */
  readonly home: string;
  /** The test's private Redis server (to stop, freeze or restart), when it asked for one. */
  readonly redis: RedisServer | undefined;
}

export interface WorkerWorldOptions<Parts extends Record<string, Closable>> {
  /**
   * A private `redis-server` per test (its options, or `true`), which the test may stop, freeze
   * or restart. Default: the shared Redis at REDIS_URL, with the prefix's keys deleted after.
   */
  privateRedis?: RedisServerOptions | boolean | undefined;
  /** Builds the test's parts (control API, simulator, ...); each is closed after the test. */
  open?: ((target: WorkerWorldTarget) => Parts | Promise<Parts>) | undefined;
  /** The temporary directory's name prefix. Default `baton-worker-`. */
  tempPrefix?: string | undefined;
}

/**
 * What each test of a `workerWorld()` suite gets: its target and its parts. The fields are set
 * by the suite's `beforeEach`: read them inside the test.
 */
export type WorkerWorld<Parts extends Record<string, Closable>> = WorkerWorldTarget &
  Readonly<Parts> & {
    /** Closes `resource` (a worker, a connection) after the test, before its parts; last opened first. */
    closeAfter<T extends Closable>(resource: T): T;
  };

/**
 * The preamble of a test that runs workers: registers a `beforeEach` that gives every test its
 * own Redis prefix (or private Redis server), directory and parts (`open`: a simulator, a control
 * API, ...), and an `afterEach` that closes what the test opened through `closeAfter`, then the
 * parts (in reverse order), then deletes the prefix's keys (or stops the private server) and the
 * directory. The package knows nothing of Baton's own packages: `open` builds those parts.
 */
export function workerWorld<Parts extends Record<string, Closable> = Record<never, Closable>>(
  options: WorkerWorldOptions<Parts> = {},
): WorkerWorld<Parts> {
  let opened: Closable[] = [];
  let parts: Closable[] = [];
  let target: WorkerWorldTarget | undefined;
  const world = {
    closeAfter<T extends Closable>(resource: T): T {
      opened.push(resource);
      return resource;
    },
  } as WorkerWorld<Parts>;
  const assign = (fields: object) => Object.assign(world, fields);

  beforeEach(async () => {
    const privateRedis = options.privateRedis ?? false;
    const redis =
      privateRedis === false
        ? undefined
        : await startRedisServer(privateRedis === true ? {} : privateRedis);
    const home = await realpath(
      await mkdtemp(path.join(tmpdir(), options.tempPrefix ?? 'baton-worker-')),
    );
    target = { url: redis?.url ?? REDIS_URL, prefix: `{bt-${randomHex(5)}}`, home, redis };
    assign(target);
    const built = (await options.open?.(target)) ?? ({} as Parts);
    parts = Object.values(built);
    assign(built);
  });

  afterEach(async () => {
    const closing = [...opened.reverse(), ...parts.reverse()];
    opened = [];
    parts = [];
    const current = target;
    target = undefined;
    try {
      for (const resource of closing) await resource.close();
    } finally {
      if (current !== undefined) {
        if (current.redis === undefined) {
          await deletePrefix(current.prefix);
          // Its memory keys: a `{tag}` prefix keeps memory under `tag:` (@baton/projects
          // memoryPrefixOf, which this package does not import).
          await deletePrefix(`${current.prefix.slice(1, -1)}:`);
        } else await current.redis.stop();
        await rm(current.home, { recursive: true, force: true });
      }
    }
  });
  return world;
}
