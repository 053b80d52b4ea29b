/**
 * Runs `work` over `items` with at most `inFlight` calls pending (ioredis pipelines them on its
 * one socket), for seeding a fleet quickly.
 */
export async function inParallel<T>(
  items: readonly T[],
  work: (item: T) => Promise<unknown>,
  inFlight = 200,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}
