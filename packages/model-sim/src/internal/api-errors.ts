/**
 * Error answers shaped like the Messages API's: `{ type: 'error', error: { type, message },
 * request_id }`, with the statuses the SDK maps to its error classes.
 */
export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

const STATUS_BY_ERROR_TYPE: Record<ApiErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** The error type the API uses for a status (for faults and script errors given as a status). */
export function errorTypeForStatus(status: number): string {
  for (const [type, candidate] of Object.entries(STATUS_BY_ERROR_TYPE)) {
    if (candidate === status) return type;
  }
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

/** A request the simulator refuses; thrown inside request handling, answered by the server. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    type: ApiErrorType | string,
    message: string,
    options: {
      status?: number;
      details?: Record<string, unknown> | undefined;
      retryAfterSeconds?: number | undefined;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.type = type;
    this.status =
      options.status ??
      STATUS_BY_ERROR_TYPE[type as ApiErrorType] ??
      (type === 'api_error' ? 500 : 400);
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export function invalidRequest(message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError('invalid_request_error', message, { details });
}

export interface ErrorBody {
  type: 'error';
  error: { type: string; message: string; details?: Record<string, unknown> };
  request_id: string;
}

export function errorBody(error: ApiError, requestId: string): ErrorBody {
  return {
    type: 'error',
    error: {
      type: error.type,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    },
    request_id: requestId,
  };
}

/** Whether the SDK should retry: the API says so explicitly with `x-should-retry`. */
export function shouldRetry(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
