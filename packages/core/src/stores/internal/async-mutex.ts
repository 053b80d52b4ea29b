/**
 * A FIFO async mutex: `run` executes bodies one at a time in call order. Used to serialise the
 * mutations of one store root inside one process before the cross-process file lock is taken,
 * so only one caller per process ever polls the lock file.
 */
export class AsyncMutex {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(body: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(body, body);
    // The chain must not reject, or every later body would be skipped.
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
