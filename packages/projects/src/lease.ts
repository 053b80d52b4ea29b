import { defineScripts } from './internal/scripts.js';
import { SCRIPT_STATUS } from './internal/status.js';
import type { RedisClient } from './redis-connection.js';
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
  /** Extends the lease; `owned: false` means it expired or someone else holds it. */
  renew(): Promise<{ owned: boolean; status: string }>;
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
  const [code, value] = (await defineScripts(redis).batonAcquireLease(
    key,
    keys.fenceCounter,
    ttlMs,
  )) as [number, number];
  if (code !== SCRIPT_STATUS.owned) {
    return { acquired: false, retryInMs: value > 0 ? value : 100 };
  }
  const token = String(value);
  return {
    acquired: true,
    lease: {
      projectId,
      fence: value,
      token,
      ttlMs,
      async renew() {
        const [owned, status] = (await defineScripts(redis).batonRenewLease(
          key,
          keys.project(projectId),
          token,
          ttlMs,
        )) as [number, string];
        return { owned: owned === SCRIPT_STATUS.owned, status };
      },
      async release() {
        return (await defineScripts(redis).batonReleaseLease(key, token)) === SCRIPT_STATUS.owned;
      },
    },
  };
}

export interface LeaseHeartbeatOptions {
  /** Renewal period; a third of the TTL leaves two chances before expiry. */
  intervalMs: number;
  /** Called once when the lease is found lost (expired or taken). */
  onLost: () => void;
  /** Called with the project status read on every renewal. */
  onStatus?: (status: string) => void;
  /** Called when a renewal call fails (Redis down); the lease may still be ours. */
  onError?: (error: unknown) => void;
}

/** Renews a lease on a timer until stopped. */
export function startLeaseHeartbeat(
  lease: ProjectLease,
  options: LeaseHeartbeatOptions,
): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const { owned, status } = await lease.renew();
      if (stopped) return;
      if (!owned) {
        stopped = true;
        options.onLost();
        return;
      }
      options.onStatus?.(status);
    } catch (error) {
      options.onError?.(error);
    }
    if (!stopped) timer = setTimeout(() => void tick(), options.intervalMs);
  };
  timer = setTimeout(() => void tick(), options.intervalMs);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
