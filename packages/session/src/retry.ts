import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';

/** How API calls are retried. */
export interface RetryOptions {
  /** Retries after the first attempt. Default 6. */
  maxRetries?: number;
  /** First backoff delay in milliseconds, doubled on every retry. Default 1_000. */
  baseDelayMs?: number;
  /** Longest backoff delay, and the most a `retry-after` header can make us wait. Default 60_000. */
  maxDelayMs?: number;
  /** Random extra fraction of the backoff (0..1) so many workers do not retry in step. Default 0.2. */
  jitter?: number;
}

/** Resolved retry settings. */
export type ResolvedRetryOptions = Required<RetryOptions>;

/** Defaults of `RetryOptions`. */
export const DEFAULT_RETRY_OPTIONS: ResolvedRetryOptions = {
  maxRetries: 6,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  jitter: 0.2,
};

/** What a failed call means for the loop. */
export interface FailureClass {
  retryable: boolean;
  /** HTTP status, if the server answered. */
  status?: number | undefined;
  /** Delay the server asked for (`retry-after-ms` / `retry-after`), in ms. */
  retryAfterMs?: number | undefined;
}

function headerValue(headers: unknown, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  if (typeof headers === 'object' && headers !== null) {
    const value = (headers as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : null;
  }
  return null;
}

/** Parse `retry-after-ms`, then `retry-after` (seconds or an HTTP date). */
export function parseRetryAfter(headers: unknown, now = Date.now()): number | undefined {
  const milliseconds = headerValue(headers, 'retry-after-ms');
  if (
    milliseconds !== null &&
    milliseconds.trim() !== '' &&
    Number.isFinite(Number(milliseconds))
  ) {
    return Math.max(0, Number(milliseconds));
  }
  const value = headerValue(headers, 'retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Retry 408, 409, 429, 5xx (incl. 529 overloaded), an overloaded/api/rate-limit error event in
 * the middle of a stream, and dropped connections; never a user abort or another 4xx (the
 * request itself is wrong, retrying cannot help).
 */
export function classifyFailure(error: unknown): FailureClass {
  if (error instanceof APIUserAbortError) return { retryable: false };
  if (error instanceof APIConnectionError) return { retryable: true };
  if (error instanceof APIError) {
    const status = error.status;
    const retryAfterMs = parseRetryAfter(error.headers);
    // An error event in the middle of a stream (after the 200) carries no status, only its type.
    const retryable =
      status === undefined
        ? RETRYABLE_STREAM_ERRORS.has(streamErrorType(error))
        : status === 408 || status === 409 || status === 429 || status >= 500;
    if (headerValue(error.headers, 'x-should-retry') === 'false')
      return { retryable: false, status };
    return {
      retryable,
      status,
      retryAfterMs,
    };
  }
  if (isDroppedConnection(error)) return { retryable: true };
  return { retryable: false };
}

/**
 * True when the API said the model is overloaded: HTTP 529, or an `overloaded_error` event in the
 * middle of a stream (which has no status). What a fallback model is for.
 */
export function isOverloaded(error: unknown): boolean {
  if (!(error instanceof APIError)) return false;
  return error.status === 529 || streamErrorType(error) === 'overloaded_error';
}

/** Error types the API sends as a mid-stream `event: error` that a new request may not meet. */
const RETRYABLE_STREAM_ERRORS = new Set(['overloaded_error', 'api_error', 'rate_limit_error']);

/** The error's type: the SDK's `type`, else the body's (`{ type: 'error', error: { type } }`). */
function streamErrorType(error: APIError): string {
  const body = error.error as { error?: { type?: unknown } } | undefined;
  const type: unknown = (error as { type?: unknown }).type ?? body?.error?.type;
  return typeof type === 'string' ? type : '';
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

/**
 * A connection cut after the response headers arrived surfaces from fetch as a plain
 * `TypeError: terminated` (undici) while the SDK reads the body, not as an APIConnectionError.
 */
function isDroppedConnection(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || code.startsWith('UND_ERR_')))
      return true;
    if (
      current.name === 'TypeError' &&
      /^(terminated|fetch failed|network error)$/i.test(current.message)
    )
      return true;
    current = current.cause;
  }
  return false;
}

/** Delay before retry number `attempt` (1-based): the server's `retry-after` if given, else exponential backoff. */
export function retryDelayMs(
  attempt: number,
  failure: FailureClass,
  options: ResolvedRetryOptions,
  random: () => number = Math.random,
): number {
  if (failure.retryAfterMs !== undefined) return Math.min(failure.retryAfterMs, options.maxDelayMs);
  const exponential = Math.min(options.baseDelayMs * 2 ** (attempt - 1), options.maxDelayMs);
  return Math.round(Math.min(exponential * (1 + options.jitter * random()), options.maxDelayMs));
}

/** Wait `ms`, or reject early with the signal's reason when it aborts. */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new APIUserAbortError());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new APIUserAbortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Information passed to `onRetry` before each wait. */
export interface RetryNotice {
  attempt: number;
  delayMs: number;
  status?: number | undefined;
  error: unknown;
}

/**
 * Run `call` until it succeeds, a failure is not retryable, or retries are used up (then the last
 * error is thrown). The SDK's own retries must be off (`maxRetries: 0`) so every retry is visible.
 */
export async function withRetries<T>(
  call: () => Promise<T>,
  options: {
    retry?: RetryOptions | undefined;
    signal?: AbortSignal | undefined;
    onRetry?: ((notice: RetryNotice) => Promise<void> | void) | undefined;
  },
): Promise<T> {
  const resolved: ResolvedRetryOptions = { ...DEFAULT_RETRY_OPTIONS, ...options.retry };
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const failure = classifyFailure(error);
      if (!failure.retryable || attempt > resolved.maxRetries || options.signal?.aborted)
        throw error;
      const delayMs = retryDelayMs(attempt, failure, resolved);
      await options.onRetry?.({
        attempt,
        delayMs,
        error,
        status: failure.status,
      });
      await abortableSleep(delayMs, options.signal);
    }
  }
}
