import { startModelSim, type ModelSimOptions } from '@baton/model-sim';
import { createBatonControl } from '@baton/projects';
import { Redis } from 'ioredis';
import { beforeEach } from 'vitest';
import {
  workerWorld,
  type Closable,
  type WorkerWorld,
  type RedisServer,
  type RedisServerOptions,
  type WorkerWorldTarget,
} from '@baton/test-support';

export interface ControlWorldOptions {
  /** A private `redis-server` per test (to stop, freeze or pause). Default: the shared Redis. */
  privateRedis?: RedisServerOptions | boolean | undefined;
  tempPrefix?: string | undefined;
}

export interface SimWorldOptions extends ControlWorldOptions {
  /** The simulator's options (faults, a script, ...). */
  sim?: ModelSimOptions | undefined;
}

/** What a `controlWorld()` or `simWorld()` test gets besides `workerWorld()`'s fields. */
export interface ProjectsWorld {
  /**
   * Project ids the test created: deleted after the test, once what the test opened is closed
   * (memory keys do not follow the prefix, so deleting the prefix leaves them).
   */
  readonly projects: string[];
}

/** Adds `projects` to a world whose parts include the control API. */
function withProjects<Parts extends { control: Closable & { deleteProject(id: string): unknown } }>(
  world: WorkerWorld<Parts>,
): WorkerWorld<Parts> & ProjectsWorld {
  const projects: string[] = [];
  // Registered before anything the test opens, so it runs after all of it is closed.
  beforeEach(() => {
    world.closeAfter({
      close: async () => {
        for (const id of projects.splice(0)) await world.control.deleteProject(id);
      },
    });
  });
  return Object.assign(world, { projects });
}

/**
 * `workerWorld()` with the control API on the test's Redis and prefix: for in-process workers
 * over a scripted runner (`startWorldWorker`).
 */
export function controlWorld(options: ControlWorldOptions = {}) {
  return withProjects(
    workerWorld({
      privateRedis: options.privateRedis,
      tempPrefix: options.tempPrefix,
      open: ({ url, prefix }) => ({ control: createBatonControl({ url, prefix }) }),
    }),
  );
}

/**
 * `workerWorld()` with the parts every worker test opens: a model simulator and the control API
 * on the test's Redis and prefix. Spawn workers with `world.closeAfter(await spawnWorker(...))`.
 */
export function simWorld(options: SimWorldOptions = {}) {
  return withProjects(
    workerWorld({
      privateRedis: options.privateRedis,
      tempPrefix: options.tempPrefix,
      open: async ({ url, prefix }) => ({
        sim: await startModelSim({ ...options.sim, port: 0 }),
        control: createBatonControl({ url, prefix }),
      }),
    }),
  );
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
