import { scripts } from './internal/scripts.js';
import { SCRIPT_STATUS } from './internal/status.js';
import type { RedisClient } from '@baton/storage-redis';
import type { BatonKeys } from './keys.js';

/** Ownership of one project for the length of one session. */
export interface ProjectLease {
  projectId: string;
  /**
   * The fencing token: proves ownership (only its holder may extend or release the lease) and
   * orders holders: every later lease of any project has a higher one. Writes that matter present
   * it, and Redis refuses them once the lease moved on (docs/operations.md "Fencing").
   */
  fence: number;
  /** `fence` as the lease key's value. */
  token: string;
  ttlMs: number;
  /**
   * The latest moment (this process's monotonic clock, `performance.now()`) the lease can still
   * be ours: the send time of the last acquire or renewal that succeeded, plus `ttlMs`. Past it
   * Redis has expired the lease, whatever the link did meanwhile.
   */
  readonly validUntil: number;
  /** Extends the lease; `owned: false` means it expired or someone else holds it. */
  renew(): Promise<{ owned: boolean; status: string }>;
  /** True while the lease still holds this token in Redis (one `GET`; renews nothing). */
  holds(): Promise<boolean>;
  /** Deletes the lease if still owned (compare-and-delete). */
  release(): Promise<boolean>;
}

export type AcquireLeaseResult =
  { acquired: true; lease: ProjectLease } | { acquired: false; retryInMs: number };

export interface LeaseOptions {
  redis: RedisClient;
  keys: BatonKeys;
  /** How long a lease lives without renewal. */
  ttlMs: number;
}

/**
 * Per-project exclusivity across any number of workers: the lease key holds a fencing token with
 * a TTL (acquire-lease-2.lua). BullMQ's group concurrency is a paid feature, and job locks alone
 * do not stop two different jobs of one project from running at once; the lease does. A crashed
 * or cut-off holder's lease expires after `ttlMs`; its later writes are then refused by token.
 */
export async function acquireProjectLease(
  options: LeaseOptions,
  projectId: string,
): Promise<AcquireLeaseResult> {
  const { redis, keys, ttlMs } = options;
  const key = keys.lease(projectId);
  const sentAt = performance.now();
  const [code, value] = (await scripts.call(
    redis,
    'acquireLease',
    key,
    keys.fenceCounter,
    ttlMs,
  )) as [number, number];
  if (code !== SCRIPT_STATUS.owned) {
    return { acquired: false, retryInMs: value > 0 ? value : 100 };
  }
  const token = String(value);
  let validUntil = sentAt + ttlMs;
  return {
    acquired: true,
    lease: {
      projectId,
      fence: value,
      token,
      ttlMs,
      get validUntil() {
        return validUntil;
      },
      async renew() {
        const renewSentAt = performance.now();
        const [owned, status] = (await scripts.call(
          redis,
          'renewLease',
          key,
          keys.project(projectId),
          token,
          ttlMs,
        )) as [number, string];
        if (owned === SCRIPT_STATUS.owned) validUntil = Math.max(validUntil, renewSentAt + ttlMs);
        return { owned: owned === SCRIPT_STATUS.owned, status };
      },
      async holds() {
        return (await redis.get(key)) === token;
      },
      async release() {
        return (await scripts.call(redis, 'releaseLease', key, token)) === SCRIPT_STATUS.owned;
      },
    },
  };
}

/** How often a lease of `ttlMs` is renewed: a quarter of the TTL leaves three chances before expiry. */
export function leaseRenewalIntervalMs(ttlMs: number): number {
  return Math.max(250, Math.floor(ttlMs / 4));
}

/**
 * The longest a command on a session's connections (lease, record, events, memory) may wait for
 * its reply: the lease TTL minus one renewal period. A stall shorter than that is waited out (as
 * the lease is); a stopped Redis or a link dropping packets keeps the TCP connection up, and
 * without a timeout a session's write would wait for it forever. With one, the write fails into
 * the session's fault handling, by when the lease watchdog has stopped the session.
 */
export function sessionCommandTimeoutMs(ttlMs: number): number {
  return ttlMs - leaseRenewalIntervalMs(ttlMs);
}

export interface LeaseHeartbeatOptions {
  /** Renewal period (`leaseRenewalIntervalMs`). */
  intervalMs: number;
  /**
   * Called once when the lease is found lost: a renewal answered that it expired or was taken,
   * or no renewal succeeded before `lease.validUntil` (the link is cut or Redis stalls for longer
   * than the TTL: the lease has expired in Redis even though nobody could say so).
   */
  onLost: (why: 'taken' | 'expired') => void;
  /** Called with the project status read on every renewal. */
  onStatus?: (status: string) => void;
  /** Called when a renewal call fails (Redis down); the lease may still be ours. */
  onError?: (error: unknown) => void;
}

/**
 * Renews a lease on a timer until stopped. A renewal that hangs (a stalled link, `CLIENT PAUSE`)
 * is waited for: once it answers, the lease is extended if Redis still had it, so a stall shorter
 * than the TTL costs nothing. A watchdog stops the holder at `validUntil` if no renewal answered
 * by then, without waiting for Redis: that is the moment another worker may take the project.
 */
export function startLeaseHeartbeat(
  lease: ProjectLease,
  options: LeaseHeartbeatOptions,
): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  const lost = (why: 'taken' | 'expired') => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    if (watchdog) clearTimeout(watchdog);
    options.onLost(why);
  };
  const armWatchdog = () => {
    if (watchdog) clearTimeout(watchdog);
    const left = Math.max(0, lease.validUntil - performance.now());
    watchdog = setTimeout(() => {
      // After the replies already received (timers run before I/O callbacks in a turn of the
      // event loop): a renewal that answered while the process was busy still counts.
      setImmediate(() => {
        if (stopped) return;
        if (performance.now() >= lease.validUntil) lost('expired');
        else armWatchdog();
      });
    }, left + 1);
  };
  const tick = async () => {
    try {
      const { owned, status } = await lease.renew();
      if (stopped) return;
      if (!owned) {
        lost('taken');
        return;
      }
      armWatchdog();
      options.onStatus?.(status);
    } catch (error) {
      if (stopped) return;
      options.onError?.(error);
    }
    if (!stopped) timer = setTimeout(() => void tick(), options.intervalMs);
  };
  armWatchdog();
  timer = setTimeout(() => void tick(), options.intervalMs);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (watchdog) clearTimeout(watchdog);
    },
  };
}
