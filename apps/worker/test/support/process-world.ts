import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startModelSim, type ModelSim, type ModelSimOptions } from '@baton/model-sim';
import { afterEach, beforeEach } from 'vitest';
import { deletePrefix, REDIS_URL } from '@baton/test-support';
import { createBatonControl, type BatonControl } from '@baton/projects';
import { randomPrefix } from './redis.js';
import { stopAll, type WorkerProcess } from './worker-process.js';

/** What a test that runs worker processes gets: its own prefix, control API, simulator and home. */
export interface ProcessWorld {
  prefix: string;
  control: BatonControl;
  sim: ModelSim;
  /** Temp directory the projects' workspaces live under. */
  home: string;
  /** Worker processes the test spawned: stopped after the test. */
  workers: WorkerProcess[];
  /** Project ids the test created: deleted after the test. */
  projects: string[];
}

/**
 * Registers a beforeEach that builds a fresh world for every test and an afterEach that tears it
 * down (workers stopped, projects deleted, the Redis prefix removed, the temp home deleted).
 * Fields are filled in by the beforeEach: read them inside the test.
 */
export function useProcessWorld(
  tempPrefix: string,
  simOptions: ModelSimOptions = {},
): ProcessWorld {
  const world = { workers: [], projects: [] } as unknown as ProcessWorld;
  beforeEach(async () => {
    world.prefix = randomPrefix();
    world.home = await mkdtemp(path.join(os.tmpdir(), tempPrefix));
    world.control = createBatonControl({
      url: REDIS_URL,
      prefix: world.prefix,
    });
    world.sim = await startModelSim({ ...simOptions, port: 0 });
  });
  afterEach(async () => {
    await stopAll(world.workers);
    for (const id of world.projects.splice(0)) await world.control.deleteProject(id);
    await world.control.close();
    await world.sim.close();
    await deletePrefix(world.prefix);
    await rm(world.home, { recursive: true, force: true });
  });
  return world;
}
