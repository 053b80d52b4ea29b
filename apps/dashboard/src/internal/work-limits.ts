/**
 * Limits on the work clients can make the dashboard do, answered at once instead of queued: a
 * request past a limit costs the server almost nothing, so a flood cannot slow the probes or the
 * pages of everyone else.
 *
 * - `createWorkGate(max)`: at most `max` heavy requests (branch diffs with their `git fetch`,
 *   searches, transcripts) run at once; one more is answered 503 with `Retry-After`.
 * - `createClientRateLimit(...)`: a token bucket per client address (project creation): past it,
 *   429 with `Retry-After`. Addresses are forgotten once their bucket is full again, and at most
 *   `maxAddresses` are kept, so a flood of addresses cannot grow the map.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { clientAddress } from './auth.js';

export interface WorkGate {
  /** A release function, or null when `max` requests already run. */
  tryEnter(): (() => void) | null;
  /** Requests running now. */
  readonly active: number;
}

export function createWorkGate(max: number): WorkGate {
  let active = 0;
  return {
    tryEnter() {
      if (active >= max) return null;
      active++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        active--;
      };
    },
    get active() {
      return active;
    },
  };
}

/** The one-line JSON answer of a refused request, with its `Retry-After`. */
function refuse(
  context: Context,
  status: 429 | 503,
  code: string,
  message: string,
  retryAfterSeconds: number,
): Response {
  return context.json({ error: { code, message } }, status, {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });
}

/** Runs the route under `gate`, or answers 503 `busy` when the gate is full. */
export function underGate(gate: WorkGate): MiddlewareHandler {
  return async (context, next) => {
    const leave = gate.tryEnter();
    if (leave === null) {
      return refuse(
        context,
        503,
        'busy',
        'Too many heavy requests (diffs, searches, transcripts) are running; try again shortly.',
        1,
      );
    }
    try {
      await next();
    } finally {
      leave();
    }
  };
}

export interface ClientRateLimitOptions {
  /** Requests one address may make per minute on average. */
  perMinute: number;
  /** Requests one address may make at once before the rate applies. Default `perMinute`. */
  burst?: number | undefined;
  /** Addresses remembered at most (the oldest go first). Default 10 000. */
  maxAddresses?: number | undefined;
  now?: (() => number) | undefined;
}

export interface ClientRateLimit {
  /** Takes one request's token for `address`: 0 when allowed, else milliseconds to wait. */
  take(address: string): number;
}

export function createClientRateLimit(options: ClientRateLimitOptions): ClientRateLimit {
  const ratePerMs = options.perMinute / 60_000;
  const burst = Math.max(1, options.burst ?? options.perMinute);
  const maxAddresses = options.maxAddresses ?? 10_000;
  const now = options.now ?? Date.now;
  // Insertion order is age order: a request re-inserts its address at the end.
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(address) {
      const at = now();
      const bucket = buckets.get(address);
      const tokens =
        bucket === undefined
          ? burst
          : Math.min(burst, bucket.tokens + (at - bucket.at) * ratePerMs);
      if (tokens < 1) return Math.ceil((1 - tokens) / ratePerMs);
      buckets.delete(address);
      buckets.set(address, { tokens: tokens - 1, at });
      while (buckets.size > maxAddresses) {
        const oldest = buckets.keys().next().value;
        if (oldest === undefined) break;
        buckets.delete(oldest);
      }
      return 0;
    },
  };
}

/** Answers 429 `rate_limited` when the client's address has no token left. */
export function rateLimited(limit: ClientRateLimit, what: string): MiddlewareHandler {
  return async (context, next) => {
    const waitMs = limit.take(clientAddress(context));
    if (waitMs > 0) {
      return refuse(
        context,
        429,
        'rate_limited',
        `Too many ${what} from this address; try again later.`,
        waitMs / 1000,
      );
    }
    await next();
  };
}
