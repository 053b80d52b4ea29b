export type ModelSimErrorCode = 'invalid_options' | 'invalid_faults' | 'listen_failed' | 'timeout';

/** The one error base of @baton/model-sim. */
export class ModelSimError extends Error {
  readonly code: ModelSimErrorCode;

  constructor(code: ModelSimErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelSimError';
    this.code = code;
  }
}
