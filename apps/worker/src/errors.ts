/** Every failure the worker package reports carries one of these codes. */
export type WorkerErrorCode =
  'invalid_config' | 'redis_unreachable' | 'invalid_input' | 'not_found' | 'conflict' | 'internal';

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

/** A readable one-line description of anything thrown (never a stack trace). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
