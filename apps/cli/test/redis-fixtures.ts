import {
  ProjectRepository,
  createBatonControl,
  createKeys,
  readRedisTarget,
  type BatonControl,
  type StreamEvent,
} from '@baton/projects';
import {
  cliWorld,
  deletePrefix,
  type CliWorld,
  type Closable,
  randomHex,
  REDIS_URL,
  waitFor,
  startRedisCluster,
  type RedisClusterOptions,
  type RedisClusterProcesses,
} from '@baton/test-support';
import { Redis } from 'ioredis';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { freeLoopbackPort } from '../src/internal/redis-discovery.js';
import { cliEnv, runCli, startCli, tempDir, type CliProcess, type CliRun } from './helpers.js';

/** Support for the tests of the Redis verbs (up, logs, projects, memory ...): real Redis, private prefixes. */

/** A private Redis world for one test: its own key prefix, control API and repository. */
export interface RedisWorld {
  prefix: string;
  control: BatonControl;
  repository: ProjectRepository;
  /** Environment for spawned `baton` processes pointing at this world. */
  env(home: string, extra?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  /** A project id unique to this test run. */
  projectId(name: string): string;
  /** Appends an event to a project's stream as the worker does. */
  append(projectId: string, event: Omit<StreamEvent, 'v' | 'projectId'>): Promise<string>;
  /** Deletes the projects it created (records, events, memory) and every key under the prefix. */
  /** Closes `resource` (a simulator, a receiver) first at cleanup; the last one opened first. */
  closeAfter<T extends Closable>(resource: T): T;
  cleanup(): Promise<void>;
}

export function createRedisWorld(): RedisWorld {
  const prefix = `{cli-test-${randomHex(4)}}`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const control = createBatonControl({ url: REDIS_URL, prefix });
  const repository = new ProjectRepository({ redis, keys: createKeys(prefix) });
  const projects: string[] = [];
  let opened: Closable[] = [];
  return {
    prefix,
    control,
    repository,
    env(home, extra = {}) {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        BATON_HOME: home,
        NO_COLOR: '1',
        REDIS_URL,
        BATON_PREFIX: prefix,
        ...extra,
      };
      for (const key of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'BATON_MODEL']) {
        if (!(key in extra)) delete env[key];
      }
      for (const [key, value] of Object.entries(extra)) if (value === undefined) delete env[key];
      return env;
    },
    projectId(name) {
      const id = `${name}-${randomHex(3)}`;
      projects.push(id);
      return id;
    },
    append(projectId, event) {
      return repository.appendEvent(projectId, { v: 1, projectId, ...event } as StreamEvent);
    },
    closeAfter(resource) {
      opened.push(resource);
      return resource;
    },
    async cleanup() {
      const closing = opened.reverse();
      opened = [];
      for (const resource of closing) await resource.close();
      for (const id of projects) await control.deleteProject(id).catch(() => undefined);
      await deletePrefix(prefix);
      await deletePrefix(`${control.keys.memoryPrefix}:`);
      await control.close();
      redis.disconnect();
    },
  };
}

/**
 * What each test of a `redisCliWorld()` suite gets: `cliWorld()`'s directory and a Redis world,
 * `baton` run in that directory against it, and workers that are stopped after the test.
 */
export interface RedisCliWorld extends CliWorld {
  /** The test's prefix, control API and repository (cleaned up after the test). */
  readonly redis: RedisWorld;
  /** Runs `baton ...args` in `dir`, with `dir` as `BATON_HOME`. */
  readonly cli: (args: string[], extra?: EnvVariables) => Promise<CliRun>;
  /**
   * Starts `baton ...args` in `dir` (its `BATON_HOME` unless `extra` names another) against the
   * test's Redis with `extra`, as a long-lived process (`up`, `worker`, `run`, `logs --follow`);
   * SIGKILLed and awaited after the test if it is still running, before the Redis world goes.
   */
  readonly start: (args: string[], extra?: EnvVariables) => CliProcess;
  /**
   * Starts `baton worker --port 0 ...args` in `dir` with its own `BATON_HOME` (`<dir>/<home>`, as
   * another machine) on the simulator (`BATON_MODEL=sim`) and `extra`; SIGKILLed after the test
   * if it is still running.
   */
  readonly startWorker: (home: string, extra?: EnvVariables, args?: string[]) => CliProcess;
  /**
   * Waits until project `id` is `completed`; a `failed` project throws its reason, and a timeout
   * names the events the project got.
   */
  readonly waitForCompleted: (id: string, timeoutMs?: number) => Promise<void>;
}

/**
 * The preamble of a test that runs `baton` against Redis: `cliWorld()` (a fresh directory per
 * test) with a fresh Redis world per test; after each test the workers are SIGKILLed and awaited
 * first, then the Redis world is cleaned up, then the directory goes.
 */
export function redisCliWorld(tempPrefix?: string | undefined): RedisCliWorld {
  const world = cliWorld(tempPrefix);
  let redis: RedisWorld | undefined;
  beforeEach(() => {
    const opened = createRedisWorld();
    redis = opened;
    world.closeAfter({ close: () => opened.cleanup() });
  });
  const current = (): RedisWorld => {
    if (redis === undefined) throw new Error('redisCliWorld(): read redis inside a test');
    return redis;
  };
  const start = (args: string[], extra?: EnvVariables): CliProcess => {
    const child = startCli(args, { cwd: world.dir, env: current().env(world.dir, extra) });
    world.closeAfter({
      close: async () => {
        child.kill('SIGKILL');
        await child.done;
      },
    });
    return child;
  };
  return {
    get dir() {
      return world.dir;
    },
    get home() {
      return world.home;
    },
    closeAfter: (resource) => world.closeAfter(resource),
    get redis() {
      return current();
    },
    cli: (args, extra) => {
      return runCli(args, { cwd: world.dir, env: current().env(world.dir, extra) });
    },
    start,
    startWorker: (home, extra = {}, args = []) =>
      start(['worker', '--port', '0', ...args], {
        BATON_HOME: path.join(world.dir, home),
        BATON_MODEL: 'sim',
        ...extra,
      }),
    waitForCompleted: async (id, timeoutMs = 90_000) => {
      const { control } = current();
      await waitFor(
        `${id} completed`,
        async () => {
          const project = await control.getProject(id);
          if (project?.status === 'failed') throw new Error(`failed: ${project.statusReason}`);
          return project?.status === 'completed';
        },
        timeoutMs,
        100,
      ).catch(async (error: unknown) => {
        const events = await control.readEvents(id, { count: 10_000 });
        const seen = events.map(({ event }) => [
          event.type,
          'sessionNumber' in event ? event.sessionNumber : null,
        ]);
        throw new Error(`${String(error)}: ${JSON.stringify(seen)}`, { cause: error });
      });
    },
  };
}

type EnvVariables = Record<string, string | undefined>;

/** What every test of a file that calls `useRedisCluster` shares: one private Redis Cluster. */
export interface ClusterFixture {
  cluster: RedisClusterProcesses;
  /** A private temp dir, the cwd and BATON_HOME of the spawned `baton`. */
  dir: string;
  /** The file's `{hash tag}` key prefix. */
  prefix: string;
  /**
   * A control API on the cluster under `prefix`, made on first use (not on a TLS cluster: this
   * process does not trust its private CA).
   */
  readonly control: BatonControl;
  /** Environment for `baton` on the cluster: its seeds, the prefix, the file's `env`, then `extra`. */
  env: (extra?: EnvVariables) => NodeJS.ProcessEnv;
  /** Starts `baton ...args` in `dir` with `env(extra)`; SIGKILLed after the file if still running. */
  start: (args: string[], extra?: EnvVariables) => CliProcess;
  /** SIGTERMs a process `start` made and resolves with its exit code. */
  stop: (child: CliProcess) => Promise<number | null>;
}

/**
 * Registers a beforeAll that starts a private Redis Cluster (`options`) with a temp dir and a
 * `{cli-<label>-…}` prefix, and an afterAll that SIGKILLs the `baton` processes left running,
 * closes the control API and stops the cluster. `env` gives the file's own variables for
 * `baton` (computed once the cluster is up). Fields are filled in by the beforeAll: read them
 * inside the tests.
 */
export function useRedisCluster(
  label: string,
  options: RedisClusterOptions & {
    env?: (cluster: RedisClusterProcesses) => EnvVariables | Promise<EnvVariables>;
  } = {},
): ClusterFixture {
  const { env: fileEnv, ...clusterOptions } = options;
  const running: CliProcess[] = [];
  let control: BatonControl | undefined;
  let cleanupDir: (() => Promise<void>) | undefined;
  let variables: EnvVariables = {};
  const fixture = {
    get control(): BatonControl {
      control ??= createBatonControl({
        target: readRedisTarget({ REDIS_CLUSTER_NODES: fixture.cluster.clusterNodesVariable }),
        prefix: fixture.prefix,
      });
      return control;
    },
    env(extra: EnvVariables = {}) {
      return cliEnv(fixture.dir, {
        REDIS_CLUSTER_NODES: fixture.cluster.clusterNodesVariable,
        BATON_PREFIX: fixture.prefix,
        ...variables,
        ...extra,
      });
    },
    start(args: string[], extra: EnvVariables = {}) {
      const child = startCli(args, { cwd: fixture.dir, env: fixture.env(extra) });
      running.push(child);
      return child;
    },
    async stop(child: CliProcess) {
      child.kill('SIGTERM');
      const { code } = await child.done;
      const index = running.indexOf(child);
      if (index !== -1) running.splice(index, 1);
      return code;
    },
  } as ClusterFixture;
  beforeAll(async () => {
    fixture.cluster = await startRedisCluster(clusterOptions);
    ({ dir: fixture.dir, cleanup: cleanupDir } = await tempDir());
    fixture.prefix = `{cli-${label}-${randomHex(4)}}`;
    variables = (await fileEnv?.(fixture.cluster)) ?? {};
  });
  afterAll(async () => {
    for (const process of running.splice(0)) {
      process.kill('SIGKILL');
      await process.done;
    }
    await control?.close();
    await fixture.cluster?.stop();
    await cleanupDir?.();
  });
  return fixture;
}

/** A TCP port on 127.0.0.1 that nothing listens on (bound, then released). */
export const closedPort = freeLoopbackPort;

/** Runs `baton ...args` with `input` on stdin. */
export function runCliWithInput(
  args: string[],
  input: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<CliRun> {
  return startCli(args, { ...options, input }).done;
}

/** The one line a failing command printed on stderr (asserts it is exactly one line). */
export function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got:\n${stderr}`);
  return lines[0] ?? '';
}
