/** Every failure the worker process reports carries one of these codes. */
export type WorkerErrorCode =
  | 'invalid_config'
  | 'redis_unreachable'
  /** Commands cannot be sandboxed here and the operator did not opt out: no session may start. */
  | 'sandbox_unavailable'
  /** Redis may evict keys (`maxmemory-policy` is not `noeviction`) and BATON_ALLOW_EVICTION is off. */
  | 'unsafe_redis'
  /** Redis holds data migrated by a newer Baton: this worker must be upgraded before it starts. */
  | 'newer_data'
  | 'internal';

export interface WorkerErrorOptions {
  /** The underlying error when wrapping. */
  cause?: unknown;
}

/** The one error base of `@baton/worker`: a string `code` and a message naming what was wrong. */
export class WorkerError extends Error {
  readonly code: WorkerErrorCode;

  constructor(code: WorkerErrorCode, message: string, options: WorkerErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WorkerError';
    this.code = code;
  }
}

export function isWorkerError(value: unknown): value is WorkerError {
  return value instanceof WorkerError;
}

export { describeError } from '@baton/projects';
