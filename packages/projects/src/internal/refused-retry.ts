/**
 * Error replies Redis gives before it runs a command or script (out of memory under `noeviction`,
 * a replica that became read-only in a failover, a dataset still loading, a busy script): nothing
 * of the call was applied, so sending it again can never apply it twice.
 */
const REFUSED_BEFORE_RUNNING = [
  'OOM',
  'READONLY',
  'LOADING',
  'MASTERDOWN',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'BUSY',
  'NOREPLICAS',
];

/** True when `error` is a Redis refusal that applied nothing (see `REFUSED_BEFORE_RUNNING`). */
export function isRefusedBeforeRunning(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return REFUSED_BEFORE_RUNNING.some((reply) => message.startsWith(reply));
}

/**
 * Waits between attempts: about 5 s in all, inside the 8 s lease a session ending holds, so a
 * short Redis hiccup at the end of a session neither loses its record nor breaks the chain.
 * Longer faults are the reconciler's (reconcile.ts).
 */
const REFUSED_RETRY_DELAYS_MS: readonly number[] = [100, 200, 400, 800, 1_600, 2_000];

/** Calls `call`, again after each delay while Redis refuses it before running it. */
export async function retryRefused<T>(
  call: () => Promise<T>,
  delaysMs: readonly number[] = REFUSED_RETRY_DELAYS_MS,
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const delay = delaysMs[attempt];
      if (delay === undefined || !isRefusedBeforeRunning(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
