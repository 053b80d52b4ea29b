import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_OPTIONS,
  classifyFailure,
  parseRetryAfter,
  retryDelayMs,
  withRetries,
} from './retry.js';

const apiError = (status: number, headers: Record<string, string> = {}) =>
  APIError.generate(
    status,
    { type: 'error', error: { type: 'x', message: 'm' } },
    'm',
    new Headers(headers),
  );

describe('retries follow the API guidance', () => {
  it('retries 429, 529, 5xx and dropped connections, not 400 or a user abort', () => {
    expect(classifyFailure(apiError(429)).retryable).toBe(true);
    expect(classifyFailure(apiError(529)).retryable).toBe(true);
    expect(classifyFailure(apiError(500)).retryable).toBe(true);
    expect(classifyFailure(new APIConnectionError({ message: 'socket hang up' })).retryable).toBe(
      true,
    );
    expect(
      classifyFailure(
        new TypeError('terminated', {
          cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
        }),
      ).retryable,
    ).toBe(true);
    expect(classifyFailure(apiError(400)).retryable).toBe(false);
    expect(classifyFailure(apiError(401)).retryable).toBe(false);
    expect(classifyFailure(new APIUserAbortError()).retryable).toBe(false);
    expect(classifyFailure(new Error('bug')).retryable).toBe(false);
  });

  it('retries an overloaded, api or rate-limit error event in the middle of a stream, not others', () => {
    // What the SDK throws for `event: error` after the 200: no status, the API's error body.
    const streamError = (type: string) =>
      new APIError(
        undefined,
        { type: 'error', error: { type, message: 'm' } },
        undefined,
        new Headers(),
        type as never,
      );
    for (const type of ['overloaded_error', 'api_error', 'rate_limit_error']) {
      expect(classifyFailure(streamError(type)).retryable, type).toBe(true);
    }
    for (const type of ['invalid_request_error', 'authentication_error', 'x']) {
      expect(classifyFailure(streamError(type)).retryable, type).toBe(false);
    }
  });

  it('honours retry-after-ms, retry-after seconds and dates, capped', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': '3' }))).toBe(3_000);
    expect(
      parseRetryAfter(new Headers({ 'retry-after': new Date(10_000).toUTCString() }), 4_000),
    ).toBe(6_000);
    expect(parseRetryAfter(new Headers({}))).toBeUndefined();
    expect(retryDelayMs(1, { retryable: true, retryAfterMs: 5_000 }, DEFAULT_RETRY_OPTIONS)).toBe(
      5_000,
    );
    expect(retryDelayMs(1, { retryable: true, retryAfterMs: 999_000 }, DEFAULT_RETRY_OPTIONS)).toBe(
      60_000,
    );
  });

  it('backs off exponentially with bounded jitter', () => {
    const options = { ...DEFAULT_RETRY_OPTIONS, baseDelayMs: 100, jitter: 0.5 };
    expect(retryDelayMs(1, { retryable: true }, options, () => 0)).toBe(100);
    expect(retryDelayMs(3, { retryable: true }, options, () => 0)).toBe(400);
    expect(retryDelayMs(3, { retryable: true }, options, () => 1)).toBe(600);
    expect(retryDelayMs(30, { retryable: true }, options, () => 1)).toBe(60_000);
  });

  it('reports every retry and gives up after maxRetries with the last error', async () => {
    const notices: number[] = [];
    let calls = 0;
    const failing = withRetries(
      () => {
        calls += 1;
        return Promise.reject(apiError(529, { 'retry-after': '0' }));
      },
      { retry: { maxRetries: 2 }, onRetry: (notice) => void notices.push(notice.attempt) },
    );
    await expect(failing).rejects.toMatchObject({ status: 529 });
    expect(calls).toBe(3);
    expect(notices).toEqual([1, 2]);
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    const pending = withRetries(() => Promise.reject(apiError(500, { 'retry-after': '60' })), {
      signal: controller.signal,
      onRetry: () => controller.abort(),
    });
    await expect(pending).rejects.toBeInstanceOf(Error);
  });
});
