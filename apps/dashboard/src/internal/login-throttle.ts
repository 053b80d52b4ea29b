/**
 * Failed authentication attempts, throttled per client address with exponential backoff, kept in
 * Redis so that every dashboard replica behind one load balancer sees the same lockout.
 *
 * The first `freeFailures` failures cost nothing (typos); after that each failure locks the
 * address out for `baseDelayMs * 2^(n - freeFailures - 1)`, capped at `maxDelayMs`. While locked
 * out, attempts are refused without looking at the token (429 with `Retry-After`), so the lockout
 * bounds the guessing rate whatever the client sends. A success clears the address's record; a
 * record is forgotten `forgetAfterMs` after its last failure (the key's TTL).
 *
 * Keys, under the deployment's `{hash tag}` prefix (one Cluster slot):
 * - `<prefix>:dashboard:login-failures:<address>`: failures counted (INCR), TTL `forgetAfterMs`;
 * - `<prefix>:dashboard:login-lock:<address>`: present while locked out, TTL the lockout.
 *
 * Behind a reverse proxy every client has the proxy's address: the proxy should rate-limit too.
 */

/** The part of an ioredis client (single node or Cluster) the throttle uses. */
export interface ThrottleRedis {
  incr(key: string): Promise<number>;
  pexpire(key: string, milliseconds: number): Promise<number>;
  pttl(key: string): Promise<number>;
  set(key: string, value: string, mode: 'PX', milliseconds: number): Promise<unknown>;
  del(key: string): Promise<number>;
}

export interface LoginThrottleOptions {
  redis: ThrottleRedis;
  /** The deployment's key prefix (`control.keys.prefix`, e.g. `{baton}`). */
  prefix: string;
  /** Failures allowed before backoff starts. Default 5. */
  freeFailures?: number | undefined;
  /** First lockout (ms). Default 1 000. */
  baseDelayMs?: number | undefined;
  /** Longest lockout (ms). Default 300 000. */
  maxDelayMs?: number | undefined;
  /** A record is dropped this long after its last failure (ms). Default 3 600 000. */
  forgetAfterMs?: number | undefined;
}

export interface LoginThrottle {
  /** Milliseconds `address` must still wait, or 0 when it may try now. */
  retryAfterMs(address: string): Promise<number>;
  /** Records a failure; resolves to the failures counted for `address` and its new lockout (ms). */
  fail(address: string): Promise<{ failures: number; lockedForMs: number }>;
  /** A success: the address starts afresh. */
  succeed(address: string): Promise<void>;
}

export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const { redis, prefix } = options;
  const freeFailures = options.freeFailures ?? 5;
  const baseDelayMs = options.baseDelayMs ?? 1_000;
  const maxDelayMs = options.maxDelayMs ?? 300_000;
  const forgetAfterMs = options.forgetAfterMs ?? 3_600_000;
  const failuresKey = (address: string) => `${prefix}:dashboard:login-failures:${address}`;
  const lockKey = (address: string) => `${prefix}:dashboard:login-lock:${address}`;

  return {
    async retryAfterMs(address) {
      return Math.max(0, await redis.pttl(lockKey(address)));
    },
    async fail(address) {
      const failures = await redis.incr(failuresKey(address));
      await redis.pexpire(failuresKey(address), forgetAfterMs);
      const over = failures - freeFailures;
      const lockedForMs = over <= 0 ? 0 : Math.min(maxDelayMs, baseDelayMs * 2 ** (over - 1));
      if (lockedForMs > 0) await redis.set(lockKey(address), '1', 'PX', lockedForMs);
      return { failures, lockedForMs };
    },
    async succeed(address) {
      await redis.del(failuresKey(address));
      await redis.del(lockKey(address));
    },
  };
}
