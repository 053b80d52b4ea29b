/**
 * Failed authentication attempts, throttled per client address with exponential backoff.
 *
 * The first `freeFailures` failures cost nothing (typos); after that each failure locks the
 * address out for `baseDelayMs * 2^(n - freeFailures - 1)`, capped at `maxDelayMs`. While locked
 * out, attempts are refused without looking at the token (429 with `Retry-After`), so the lockout
 * bounds the guessing rate whatever the client sends. A success clears the address's record;
 * records are forgotten `forgetAfterMs` after their last failure, and at most `maxAddresses` are
 * kept (the oldest go first) so a flood of addresses cannot grow the map.
 *
 * Behind a reverse proxy every client has the proxy's address: the proxy should rate-limit too.
 */
export interface LoginThrottleOptions {
  /** Failures allowed before backoff starts. Default 5. */
  freeFailures?: number | undefined;
  /** First lockout (ms). Default 1 000. */
  baseDelayMs?: number | undefined;
  /** Longest lockout (ms). Default 300 000. */
  maxDelayMs?: number | undefined;
  /** Addresses remembered at most. Default 10 000. */
  maxAddresses?: number | undefined;
  /** A record is dropped this long after its last failure (ms). Default 3 600 000. */
  forgetAfterMs?: number | undefined;
  now?: (() => number) | undefined;
}

export interface LoginThrottle {
  /** Milliseconds `address` must still wait, or 0 when it may try now. */
  retryAfterMs(address: string): number;
  /** Records a failure; returns the failures counted for `address` and its new lockout (ms). */
  fail(address: string): { failures: number; lockedForMs: number };
  /** A success: the address starts afresh. */
  succeed(address: string): void;
}

interface Failures {
  count: number;
  lockedUntil: number;
  lastAt: number;
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const freeFailures = options.freeFailures ?? 5;
  const baseDelayMs = options.baseDelayMs ?? 1_000;
  const maxDelayMs = options.maxDelayMs ?? 300_000;
  const maxAddresses = options.maxAddresses ?? 10_000;
  const forgetAfterMs = options.forgetAfterMs ?? 3_600_000;
  const now = options.now ?? Date.now;
  // Insertion order is age order: a failure re-inserts its address at the end.
  const records = new Map<string, Failures>();

  function current(address: string): Failures | undefined {
    const record = records.get(address);
    if (record !== undefined && now() - record.lastAt > forgetAfterMs) {
      records.delete(address);
      return undefined;
    }
    return record;
  }

  return {
    retryAfterMs(address) {
      const record = current(address);
      return record === undefined ? 0 : Math.max(0, record.lockedUntil - now());
    },
    fail(address) {
      const at = now();
      const count = (current(address)?.count ?? 0) + 1;
      const over = count - freeFailures;
      const lockedForMs = over <= 0 ? 0 : Math.min(maxDelayMs, baseDelayMs * 2 ** (over - 1));
      records.delete(address);
      records.set(address, { count, lockedUntil: at + lockedForMs, lastAt: at });
      while (records.size > maxAddresses) {
        const oldest = records.keys().next().value;
        if (oldest === undefined) break;
        records.delete(oldest);
      }
      return { failures: count, lockedForMs };
    },
    succeed(address) {
      records.delete(address);
    },
  };
}
