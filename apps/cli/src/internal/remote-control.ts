import type { BatonControl, ProjectError } from '@baton/projects';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { CommandFailure } from './command-failure.js';

/** Where the CLI finds Redis: `REDIS_URL`, else the local default. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * `REDIS_URL` (default `redis://127.0.0.1:6379`), checked so a typo gives one clear line instead of
 * a connection error from deep inside ioredis.
 */
export function redisUrlFromEnvironment(env: NodeJS.ProcessEnv = process.env): string {
  const value = env.REDIS_URL?.trim();
  const url = value === undefined || value === '' ? DEFAULT_REDIS_URL : value;
  checkRedisUrl(url, 'REDIS_URL');
  return url;
}

/** Throws a usage error unless `url` is a `redis://` or `rediss://` URL with a host. */
export function checkRedisUrl(url: string, name: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError('usage', `${name} is not a URL: "${url}".`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new CliError('usage', `${name} must start with redis:// or rediss://, got "${url}".`);
  }
  if (parsed.hostname === '') throw new CliError('usage', `${name} has no host: "${url}".`);
}

/**
 * True for `@baton/projects`' and the worker's errors (checked by shape: the packages are loaded
 * only when needed). Both use the same codes for Redis and config problems.
 */
function isWorkerError(
  error: unknown,
): error is Omit<ProjectError, 'code'> & { code: ProjectError['code'] | 'sandbox_unavailable' } {
  return (
    error instanceof Error &&
    (error.name === 'ProjectError' || error.name === 'WorkerError') &&
    'code' in error
  );
}

/**
 * The control API on `REDIS_URL` with the workers' key prefix (`BATON_PREFIX`, default `{baton}`).
 * Redis is given 3 s to answer: a CLI command should fail fast when it is down.
 */
export async function openControl(env: NodeJS.ProcessEnv = process.env): Promise<BatonControl> {
  const url = redisUrlFromEnvironment(env);
  const prefix = env.BATON_PREFIX?.trim();
  // Loaded on use: `--help` and local commands should not pay for BullMQ.
  const { createBatonControl } = await import('@baton/projects');
  try {
    return createBatonControl({
      url,
      connectTimeoutMs: 3_000,
      ...(prefix === undefined || prefix === '' ? {} : { prefix }),
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
