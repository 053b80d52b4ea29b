/** Every failure `@baton/projects` reports carries one of these codes. */
export type ProjectErrorCode =
  | 'invalid_config'
  | 'redis_unreachable'
  | 'invalid_input'
  | 'not_found'
  | 'conflict'
  /** A session's write refused: its lease moved on to a newer session (docs/operations.md "Fencing"). */
  | 'fenced'
  /** Redis holds data migrated by a newer Baton (`runRedisMigrations`, docs/operations.md "Upgrading"). */
  | 'newer_data'
  /** A write refused while Redis holds data an earlier Baton stored and no worker migrated yet. */
  | 'migration_pending'
  | 'internal';

export interface ProjectErrorOptions {
  /** The underlying error when wrapping. */
  cause?: unknown;
}

/** The one error base of `@baton/projects`: a string `code` and a message naming what was wrong. */
export class ProjectError extends Error {
  readonly code: ProjectErrorCode;

  constructor(code: ProjectErrorCode, message: string, options: ProjectErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProjectError';
    this.code = code;
  }
}

export function isProjectError(value: unknown): value is ProjectError {
  return value instanceof ProjectError;
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
