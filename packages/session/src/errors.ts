/** Why a session-level operation failed. */
export type SessionErrorCode =
  'invalid_options' | 'workspace' | 'api_error' | 'prompt_missing' | 'git';

/** The one error base of `@baton/session`. Messages name what was wrong and never contain stack traces. */
export class SessionError extends Error {
  override readonly name = 'SessionError';
  readonly code: SessionErrorCode;

  constructor(code: SessionErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}
