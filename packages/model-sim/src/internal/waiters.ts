import { ModelSimError } from '../errors.js';

interface Waiter {
  release: () => void;
}

/** Requests held by the simulator: sleeping (latency, slow streams) or stalled until released. */
export class Waiters {
  readonly #stalled = new Set<Waiter>();
  readonly #sleeping = new Set<Waiter>();
  readonly #stallListeners = new Set<() => void>();

  get stalled(): number {
    return this.#stalled.size;
  }

  /** Waits `ms`; `releaseAll()` cuts it short. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      const waiter: Waiter = {
        release: () => {
          clearTimeout(timer);
          this.#sleeping.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.release, ms);
      this.#sleeping.add(waiter);
    });
  }

  /** Holds a request until `releaseStalls()` or `releaseAll()`. */
  stall(): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        release: () => {
          this.#stalled.delete(waiter);
          resolve();
        },
      };
      this.#stalled.add(waiter);
      for (const listener of this.#stallListeners) listener();
    });
  }

  /** Answers every stalled request now; returns how many there were. */
  releaseStalls(): number {
    const released = this.#stalled.size;
    for (const waiter of [...this.#stalled]) waiter.release();
    return released;
  }

  /** Ends every sleep and stall (on close). */
  releaseAll(): void {
    for (const waiter of [...this.#sleeping]) waiter.release();
    this.releaseStalls();
  }

  /** Resolves once `count` requests are stalled; rejects after `timeoutMs`. */
  waitForStalled(count: number, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (this.#stalled.size >= count) {
          cleanup();
          resolve();
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new ModelSimError(
            'timeout',
            `Timed out after ${timeoutMs} ms waiting for ${count} stalled request(s); ${this.#stalled.size} stalled.`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.#stallListeners.delete(check);
      };
      this.#stallListeners.add(check);
      check();
    });
  }
}
