import { EXIT_CODES } from '@baton/core';
import type { WorkerConfig } from './config.js';
import { SHUTDOWN_CLOSE_MS, startWorkerFromConfig, type RunningWorker } from './start-worker.js';

export interface RunUntilSignalledOptions {
  /** Starts the worker. Default `startWorkerFromConfig` (pass your own to give it options). */
  start?: ((config: WorkerConfig) => Promise<RunningWorker>) | undefined;
  /** Called once the worker started, before a signal heard during the start is acted on. */
  onStarted?: ((worker: RunningWorker) => void) | undefined;
}

/** After the grace and the close budget, the process ends even if something still hangs. */
const LAST_RESORT_MARGIN_MS = 2_000;

const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/**
 * Starts a worker from `config` and runs it until SIGTERM or SIGINT, then drains it
 * (`RunningWorker.shutdown`). What `node dist/main.js` and `baton worker` both do.
 *
 * The handlers go in before the start: the "worker started" line is written during it, and a
 * signal right after that line (an orchestrator's stop, a deploy) must drain, not kill; a signal
 * during the start drains as soon as the start returns. A second signal exits 130 at once,
 * whenever it comes. If the drain still hangs `SHUTDOWN_CLOSE_MS` + 2 s after the grace, the
 * process exits 1, leaving its jobs to be resumed elsewhere once their locks expire.
 *
 * Resolves with whether every session finished within the grace; rejects with the start's error.
 */
export async function runUntilSignalled(
  config: WorkerConfig,
  options: RunUntilSignalledOptions = {},
): Promise<{ drained: boolean }> {
  let running: RunningWorker | undefined;
  let received: NodeJS.Signals | undefined;
  let settle: (result: { drained: boolean }) => void = () => undefined;
  const stopped = new Promise<{ drained: boolean }>((resolve) => (settle = resolve));

  const drain = (worker: RunningWorker, signal: NodeJS.Signals): void => {
    const { logger } = worker;
    logger.info({ signal }, 'signal received; draining');
    const lastResort = setTimeout(
      () => {
        logger.error({ signal }, 'shutdown did not finish in time: exiting');
        process.exit(EXIT_CODES.internal);
      },
      config.shutdownGraceMs + SHUTDOWN_CLOSE_MS + LAST_RESORT_MARGIN_MS,
    ).unref();
    void worker
      .shutdown()
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        return { drained: false };
      })
      .then((result) => {
        clearTimeout(lastResort);
        settle(result);
      });
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received !== undefined) {
      running?.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(EXIT_CODES.cancelled);
    }
    received = signal;
    if (running !== undefined) drain(running, signal);
  };

  for (const signal of SIGNALS) process.on(signal, onSignal);
  try {
    running = await (options.start ?? startWorkerFromConfig)(config);
  } catch (error) {
    for (const signal of SIGNALS) process.off(signal, onSignal);
    throw error;
  }
  options.onStarted?.(running);
  if (received !== undefined) drain(running, received);
  return stopped;
}
