/**
 * One costly operation per key at a time. A GET that starts a `git fetch` (the branch diff) must
 * not start a second one for the same project while the first runs, however many clients ask:
 * callers asking for the same variant share the running promise; another variant waits for it to
 * settle and then runs (both write the same fetch cache).
 */
export interface SingleFlight {
  run<T>(key: string, variant: string, work: () => Promise<T>): Promise<T>;
  /** Keys with work running now (for tests and metrics). */
  readonly size: number;
}

interface Flight {
  variant: string;
  promise: Promise<unknown>;
}

export function createSingleFlight(): SingleFlight {
  const flights = new Map<string, Flight>();
  async function run<T>(key: string, variant: string, work: () => Promise<T>): Promise<T> {
    for (;;) {
      const current = flights.get(key);
      if (current === undefined) break;
      if (current.variant === variant) return (await current.promise) as T;
      await current.promise.catch(() => undefined);
    }
    const promise = work().finally(() => {
      if (flights.get(key)?.promise === promise) flights.delete(key);
    });
    flights.set(key, { variant, promise });
    return promise;
  }
  return {
    run,
    get size() {
      return flights.size;
    },
  };
}
