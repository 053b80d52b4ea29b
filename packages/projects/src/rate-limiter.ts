import { scripts } from './internal/scripts.js';
import type { RedisClient } from '@baton/storage-redis';

export interface ModelRateLimiterOptions {
  redis: RedisClient;
  /** Bucket key (from `BatonKeys.modelRateLimit`). */
  key: string;
  /** Model requests per second across every worker. 0 or less disables the limit. */
  requestsPerSecond: number;
  /** Requests allowed in a burst. Default: one second's worth (at least 1). */
  burst?: number;
}

export interface ModelRateLimiter {
  /** Resolves when a request may be sent; rejects with the signal's reason if aborted. */
  acquire(signal?: AbortSignal | null): Promise<void>;
}

/**
 * A token bucket in Redis shared by every worker process, so N workers together stay under one
 * model request rate. BullMQ's limiter counts jobs, not model requests (one session makes many).
 */
export function createModelRateLimiter(options: ModelRateLimiterOptions): ModelRateLimiter {
  const rate = options.requestsPerSecond;
  if (!(rate > 0)) return { acquire: async () => {} };
  const burst = options.burst ?? Math.max(1, Math.ceil(rate));
  return {
    async acquire(signal) {
      for (;;) {
        signal?.throwIfAborted();
        const wait = Number(
          await scripts.call(options.redis, 'takeToken', options.key, rate, burst),
        );
        if (!(wait > 0)) return;
        await abortableDelay(wait, signal);
      }
    },
  };
}

function abortableDelay(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Wraps `fetch` so every model request first takes a token. Passed to the Anthropic client as its
 * `fetch` option; the SDK's own retries (429/529 with backoff) go through it too.
 */
export function rateLimitedFetch(
  limiter: ModelRateLimiter,
  inner: typeof fetch = fetch,
): typeof fetch {
  return async (input, init) => {
    await limiter.acquire(init?.signal ?? null);
    return inner(input, init);
  };
}
