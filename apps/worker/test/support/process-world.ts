import type { ModelSim, ModelSimOptions } from '@baton/model-sim';
import { beforeEach } from 'vitest';
import {
  startWebhookReceiver,
  waitFor,
  type Closable,
  type WebhookReceiver,
} from '@baton/test-support';
import type { BatonControl } from '@baton/projects';
import { randomProjectId } from './redis.js';
import { simWorld } from './sim-world.js';
import { simWorkerEnv, spawnWorker, stopAll, type WorkerProcess } from './worker-process.js';

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
  /** Closes `resource` after the test, after the workers it spawned later; last opened first. */
  closeAfter<T extends Closable>(resource: T): T;
}

/**
 * Registers a beforeEach that builds a fresh world for every test and an afterEach that tears it
 * down (workers stopped, then simWorld's: projects deleted, the Redis prefix removed, the temp
 * home deleted).
 * Fields are filled in by the beforeEach: read them inside the test.
 */
export function useProcessWorld(
  tempPrefix: string,
  simOptions: ModelSimOptions = {},
): ProcessWorld {
  const workers: WorkerProcess[] = [];
  const world = Object.assign(simWorld({ tempPrefix, sim: simOptions }), { workers });
  // Closed first (the last one opened): workers stop before their projects and Redis go.
  beforeEach(() => {
    world.closeAfter({ close: () => stopAll(workers) });
  });
  return world;
}

/** A project whose second session hangs on worker `first`, for the tests that kill that worker. */
export interface StalledSession {
  /** The project's id (deleted after the test). */
  id: string;
  /** Worker `first`, with the session hanging in it. */
  first: WorkerProcess;
  /** The environment `first` runs with (the world's home): spawn the next worker from it. */
  env: Record<string, string>;
}

/**
 * Spawns worker `first` (sharing the world's BATON_HOME), creates and enqueues a project with
 * `goal`, lets the init session finish, then lets session 2 answer two model requests and hangs
 * its third until the test calls `sim.releaseStalls()`.
 */
export async function stallSecondSession(
  world: ProcessWorld,
  project: { label: string; goal: string },
): Promise<StalledSession> {
  const { prefix, control, sim, workers, projects, home } = world;
  // A project without --repo keeps its code in one BATON_HOME: every worker of the test shares it.
  const env = simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_HOME: home });
  const first = await spawnWorker({ ...env, BATON_WORKER_ID: 'first' });
  workers.push(first);
  const id = randomProjectId(project.label);
  projects.push(id);
  await control.createProject({ id, goal: project.goal });
  await control.enqueue(id);
  await waitFor(
    'init session done',
    async () => ((await control.getProject(id))?.counters.sessions ?? 0) >= 1,
  );
  sim.setFaults({ stallOn: [sim.requests + 3] });
  await sim.waitForStalled(1, 20_000);
  return { id, first, env };
}

/**
 * Starts a webhook receiver (closed after the test, once the workers stopped) and a worker
 * process that sends it webhooks signed with `secret`, retried after 50 ms.
 */
export async function spawnWebhookWorker(
  world: ProcessWorld,
  secret: string,
): Promise<WebhookReceiver> {
  const { prefix, sim, workers } = world;
  const receiver = world.closeAfter(await startWebhookReceiver());
  workers.push(
    await spawnWorker(
      simWorkerEnv(
        { prefix, simUrl: sim.url },
        {
          BATON_WEBHOOK_URL: receiver.url,
          BATON_WEBHOOK_SECRET: secret,
          BATON_WEBHOOK_BACKOFF_MS: '50',
        },
      ),
    ),
  );
  return receiver;
}
