import { startModelSim, type ModelSimOptions } from '@baton/model-sim';
import { createBatonControl } from '@baton/projects';
import { Redis } from 'ioredis';
import {
  workerWorld,
  type WorkerWorld,
  type RedisServer,
  type RedisServerOptions,
  type WorkerWorldTarget,
} from '@baton/test-support';

export interface SimWorldOptions {
  /** A private `redis-server` per test (to stop, freeze or pause). Default: the shared Redis. */
  privateRedis?: RedisServerOptions | boolean | undefined;
  /** The simulator's options (faults, ...). */
  sim?: ModelSimOptions | undefined;
  tempPrefix?: string | undefined;
}

/**
 * `workerWorld()` with the parts every worker test opens: a model simulator and the control API
 * on the test's Redis and prefix. Spawn workers with `world.closeAfter(await spawnWorker(...))`.
 */
export function simWorld(options: SimWorldOptions = {}) {
  return workerWorld({
    privateRedis: options.privateRedis,
    tempPrefix: options.tempPrefix,
    open: async ({ url, prefix }) => ({
      sim: await startModelSim({ ...options.sim, port: 0 }),
      control: createBatonControl({ url, prefix }),
    }),
  });
}

/** A plain connection to the test's Redis (raw keys, CLIENT PAUSE), closed after the test. */
export function adminOf(world: WorkerWorld<Record<never, never>>): Redis {
  const admin = new Redis(world.url, { maxRetriesPerRequest: 1 });
  world.closeAfter({ close: () => admin.disconnect() });
  return admin;
}

/** The test's private Redis server (a world made with `privateRedis`). */
export function privateRedisOf(world: WorkerWorldTarget): RedisServer {
  if (world.redis === undefined) throw new Error('this world has no private Redis server');
  return world.redis;
}
