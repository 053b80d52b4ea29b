import {
  ProjectRepository,
  createBatonControl,
  createKeys,
  type BatonControl,
  type StreamEvent,
} from '@baton/projects';
import { deletePrefix, randomHex, REDIS_URL } from '@baton/test-support';
import { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { freeLoopbackPort } from '../src/internal/redis-discovery.js';
import { startCli, tempDir, type CliProcess, type CliRun } from './helpers.js';

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
  cleanup(): Promise<void>;
}

export function createRedisWorld(): RedisWorld {
  const prefix = `{cli-test-${randomHex(4)}}`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const control = createBatonControl({ url: REDIS_URL, prefix });
  const repository = new ProjectRepository({ redis, keys: createKeys(prefix) });
  const projects: string[] = [];
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
    async cleanup() {
      for (const id of projects) await control.deleteProject(id).catch(() => undefined);
      await deletePrefix(prefix);
      await control.close();
      redis.disconnect();
    },
  };
}

/** What each test of a file that calls `useRedisWorld` gets: a fresh temp dir and Redis world. */
export interface RedisWorldFixture {
  /** A private temp dir, the cwd and BATON_HOME of the spawned `baton`. */
  dir: string;
  world: RedisWorld;
}

/**
 * Registers the beforeEach/afterEach that give every test of the file its own temp dir and
 * Redis world, and hands them to `use` before each test. After each test it first SIGKILLs
 * (and awaits) the processes left in `running`, so none still holds the world or the dir,
 * then cleans up the world and removes the dir.
 */
export function useRedisWorld(
  use: (fixture: RedisWorldFixture) => void,
  options: { running?: CliProcess[] } = {},
): void {
  let current: (RedisWorldFixture & { cleanupDir: () => Promise<void> }) | undefined;
  beforeEach(async () => {
    const { dir, cleanup: cleanupDir } = await tempDir();
    current = { dir, world: createRedisWorld(), cleanupDir };
    use({ dir: current.dir, world: current.world });
  });
  afterEach(async () => {
    for (const process of options.running?.splice(0) ?? []) {
      process.kill('SIGKILL');
      await process.done;
    }
    if (current === undefined) return;
    const { world, cleanupDir } = current;
    current = undefined;
    await world.cleanup();
    await cleanupDir();
  });
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
