/** Every failure `@baton/dashboard` reports carries one of these codes. */
export type DashboardErrorCode =
  | 'invalid_config'
  | 'token_required'
  | 'missing_assets'
  | 'listen_failed'
  | 'invalid_input'
  | 'not_found'
  | 'unauthorized'
  | 'forbidden'
  | 'internal';

export interface DashboardErrorOptions {
  /** The underlying error when wrapping. */
  cause?: unknown;
}

/** The one error base of `@baton/dashboard`: a string `code` and a message naming what was wrong. */
export class DashboardError extends Error {
  readonly code: DashboardErrorCode;

  constructor(code: DashboardErrorCode, message: string, options: DashboardErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DashboardError';
    this.code = code;
  }
}

export function isDashboardError(value: unknown): value is DashboardError {
  return value instanceof DashboardError;
}
