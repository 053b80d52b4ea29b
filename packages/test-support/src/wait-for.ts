/** What `check` returns while the condition does not hold yet. */
type NotYet = undefined | null | false;

/**
 * Polls `check` every `intervalMs` until it returns a truthy value, and returns that value. A
 * `check` that throws counts as "not yet" (the condition may be mid-change); after `timeoutMs`
 * it throws an error naming `what` and, if there was one, the last error `check` threw.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | NotYet> | T | NotYet,
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const reason = lastError === undefined ? '' : `: ${String(lastError)}`;
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${reason}`,
        lastError === undefined ? undefined : { cause: lastError },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
