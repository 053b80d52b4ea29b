import type { BatonControl, ProjectError, RedisTarget } from '@baton/projects';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { CommandFailure } from './command-failure.js';
import { CLI_ENV_VARIABLES } from './environment.js';

/**
 * Where the CLI finds Redis: `REDIS_CLUSTER_NODES` (a Cluster) when set, else `REDIS_URL`, else
 * `redis://127.0.0.1:6379`. A bad value is a usage error with one line naming the variable, not a
 * connection error from deep inside ioredis.
 */
export async function redisTargetFromEnvironment(
  env: NodeJS.ProcessEnv = process.env,
): Promise<RedisTarget> {
  // Loaded on use: `--help` and local commands should not pay for ioredis.
  const { readRedisTarget } = await import('@baton/projects');
  try {
    return readRedisTarget(env);
  } catch (error) {
    throw toCommandFailure(error);
  }
}

/**
 * True for `@baton/projects`' and the worker's errors (checked by shape: the packages are loaded
 * only when needed). They use the same codes for Redis and config problems.
 */
function isWorkerError(
  error: unknown,
): error is Omit<ProjectError, 'code'> & { code: ProjectError['code'] | 'sandbox_unavailable' } {
  return (
    error instanceof Error &&
    (error.name === 'ProjectError' ||
      error.name === 'WorkerError' ||
      error.name === 'RedisTargetError') &&
    'code' in error
  );
}

/**
 * The control API on the Redis of `redisTargetFromEnvironment` with the workers' key prefix
 * (`BATON_PREFIX`, default `{baton}`). Redis is given 3 s to answer: a CLI command should fail
 * fast when it is down.
 */
export async function openControl(env: NodeJS.ProcessEnv = process.env): Promise<BatonControl> {
  const target = await redisTargetFromEnvironment(env);
  // Unset or empty: the default prefix.
  const prefix = env[CLI_ENV_VARIABLES.prefix]?.trim() || undefined;
  // Loaded on use: `--help` and local commands should not pay for BullMQ.
  const { createBatonControl, prefixProblem } = await import('@baton/projects');
  // The control API would name its option; the user set the variable.
  const problem = prefix === undefined ? null : prefixProblem(prefix, CLI_ENV_VARIABLES.prefix);
  if (problem !== null) throw new CliError('usage', `${problem}.`);
  try {
    return createBatonControl({
      target,
      connectTimeoutMs: 3_000,
      prefix,
    });
  } catch (error) {
    throw toCommandFailure(error);
  }
}

/** Maps the project and worker packages' errors onto CLI exit codes; anything else is returned unchanged. */
export function toCommandFailure(error: unknown): unknown {
  if (!isWorkerError(error)) return error;
  switch (error.code) {
    case 'redis_unreachable':
      return new CommandFailure('internal', EXIT_CODES.redisUnreachable, `${error.message}.`, {
        cause: error,
      });
    case 'not_found':
      return new CommandFailure('not_found', EXIT_CODES.notFound, `${error.message}.`, {
        cause: error,
      });
    case 'sandbox_unavailable':
      return new CliError('internal', error.message, { cause: error });
    case 'invalid_input':
    case 'invalid_config':
    case 'newer_data':
    case 'migration_pending':
    case 'conflict':
      return new CliError('usage', `${error.message}.`, { cause: error });
    default:
      return error;
  }
}

/** Runs `body` with a control API and always closes it; worker errors become CLI errors. */
export async function withControl<T>(body: (control: BatonControl) => Promise<T>): Promise<T> {
  const control = await openControl();
  try {
    return await body(control);
  } catch (error) {
    throw toCommandFailure(error);
  } finally {
    await control.close();
  }
}
