import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  checkDeploymentMarker,
  describeError,
  describeLostDeployment,
  ensureDeploymentMarker,
  evictionProblem,
  readEvictionPolicies,
  type BatonKeys,
  type DeploymentMarker,
  type RedisClient,
} from '@baton/projects';
import type { Logger } from 'pino';
import { WorkerError } from './errors.js';

/** Options of `createRedisWatch`. */
export interface RedisWatchOptions {
  redis: RedisClient;
  keys: BatonKeys;
  /** `BATON_ALLOW_EVICTION`: run on an evicting Redis with a warning instead of refusing. */
  allowEviction: boolean;
  /** `BATON_HOME`: remembers the deployment marker this worker last ran on, per prefix. */
  home: string;
  logger: Logger;
  /** How often the running worker re-checks the policy and the marker (ms). Default 5000. */
  everyMs?: number | undefined;
  /** Called once when Redis lost its data while this worker ran. */
  onLost: (message: string) => void;
}

/** Checks of the Redis a worker runs on: at start (`start`) and then on a timer. */
export interface RedisWatch {
  /**
   * Refuses an evicting Redis (throws `WorkerError('unsafe_redis')` after one JSON error line with
   * the fix), writes or reads the deployment marker, says so if Redis lost the data this worker
   * last ran on, then starts the timer.
   */
  start(): Promise<void>;
  /** Why the worker is not ready because of Redis, or undefined. */
  problem(): string | undefined;
  stop(): void;
}

/** Watches the eviction policy and the deployment marker (see redis-safety.ts in @baton/projects). */
export function createRedisWatch(options: RedisWatchOptions): RedisWatch {
  const { redis, keys, logger } = options;
  let marker: DeploymentMarker | undefined;
  let evicting: string | undefined;
  let lost: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const memoryFile = path.join(options.home, 'redis-deployments.json');

  async function checkPolicy(atStart: boolean): Promise<void> {
    const policies = await readEvictionPolicies(redis);
    const problem = evictionProblem(policies);
    const policy = policies.map((entry) => entry.policy).join(',');
    if (problem === undefined) {
      evicting = undefined;
      return;
    }
    if (options.allowEviction) {
      if (atStart) logger.warn({ maxmemoryPolicy: policy, allowEviction: true }, problem);
      return;
    }
    if (atStart) {
      logger.error(
        { maxmemoryPolicy: policy, fix: 'CONFIG SET maxmemory-policy noeviction' },
        problem,
      );
      throw new WorkerError('unsafe_redis', problem);
    }
    if (evicting === undefined) {
      logger.error({ maxmemoryPolicy: policy }, `not ready: ${problem}`);
    }
    evicting = problem;
  }

  async function remembered(): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(memoryFile, 'utf8')) as Record<string, string>;
    } catch {
      return {};
    }
  }

  async function checkMarker(): Promise<void> {
    if (marker === undefined || lost !== undefined) return;
    const check = await checkDeploymentMarker(redis, keys, marker);
    if (check.kind === 'same') return;
    lost = describeLostDeployment(marker);
    logger.error({ deployment: marker.id, found: check.kind }, lost);
    options.onLost(lost);
  }

  async function tick(): Promise<void> {
    try {
      await checkPolicy(false);
      await checkMarker();
    } catch (error) {
      // Redis down: /readyz already says so through the connection state.
      logger.debug({ err: error }, 'redis check failed');
    }
    if (!stopped) timer = setTimeout(() => void tick(), options.everyMs ?? 5_000);
  }

  return {
    async start() {
      await checkPolicy(true);
      const result = await ensureDeploymentMarker(redis, keys);
      marker = result.marker;
      const known = await remembered();
      const before = known[keys.prefix];
      if (result.created && before !== undefined && before !== marker.id) {
        // This worker ran on data that is no longer there: say so once, then go on with the
        // empty Redis (nothing of the lost projects runs here any more, so nothing is fragmented).
        logger.error(
          { deployment: marker.id, previousDeployment: before },
          describeLostDeployment({ id: before, createdAt: 'before this worker restarted' }),
        );
      } else if (result.created) {
        logger.info(
          { deployment: marker.id, projects: result.projectsBefore },
          'deployment marker written',
        );
      }
      if (before !== marker.id) {
        try {
          await mkdir(options.home, { recursive: true });
          await writeFile(
            memoryFile,
            `${JSON.stringify({ ...known, [keys.prefix]: marker.id })}\n`,
          );
        } catch (error) {
          logger.warn({ err: describeError(error) }, 'could not remember the deployment marker');
        }
      }
      timer = setTimeout(() => void tick(), options.everyMs ?? 5_000);
    },
    problem: () => lost ?? evicting,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
