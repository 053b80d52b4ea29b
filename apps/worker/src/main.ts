#!/usr/bin/env node
// The worker process: wiring only. Reads config, starts the worker, installs shutdown handlers.
import { EXIT_CODES as EXIT } from '@baton/core';
import { contextVariablesNotice, loadWorkerConfig } from './config.js';
import { describeError, isWorkerError } from './errors.js';
import { SHUTDOWN_CLOSE_MS, startWorkerFromConfig } from './start-worker.js';

let config: ReturnType<typeof loadWorkerConfig>;
try {
  config = loadWorkerConfig(process.env);
} catch (error) {
  process.stderr.write(
    `baton worker: ${describeError(error).split('\n').join('\nbaton worker: ')}\n`,
  );
  process.exit(EXIT.usage);
}

const contextNotice = contextVariablesNotice(process.env);
if (contextNotice !== undefined) process.stderr.write(`baton worker: ${contextNotice}\n`);

// The handlers go in before the worker starts: its "worker started" line is written during the
// start, and a SIGTERM right after it (an orchestrator's stop, a deploy) must drain, not kill.
let running: Awaited<ReturnType<typeof startWorkerFromConfig>> | undefined;
let signalDuringStart: NodeJS.Signals | undefined;
let signals = 0;
process.on('SIGTERM', (signal) => onSignal(signal));
process.on('SIGINT', (signal) => onSignal(signal));

try {
  running = await startWorkerFromConfig(config);
} catch (error) {
  process.stderr.write(
    `baton worker: ${isWorkerError(error) ? error.message : describeError(error)}\n`,
  );
  process.exit(
    isWorkerError(error) && error.code === 'redis_unreachable'
      ? EXIT.redisUnreachable
      : isWorkerError(error) &&
          (error.code === 'invalid_config' ||
            error.code === 'unsafe_redis' ||
            error.code === 'newer_data')
        ? EXIT.usage
        : EXIT.internal,
  );
}

function onSignal(signal: NodeJS.Signals): void {
  if (running === undefined) {
    // Still starting: drain as soon as the start returns; a second signal exits at once.
    if (signalDuringStart !== undefined) process.exit(EXIT.cancelled);
    signalDuringStart = signal;
    return;
  }
  const { logger } = running;
  signals += 1;
  if (signals > 1) {
    logger.warn({ signal }, 'second signal: exiting now');
    process.exit(EXIT.cancelled);
  }
  logger.info({ signal }, 'signal received; draining');
  // The last resort if something still hangs after the bounded close: the process ends anyway,
  // leaving its jobs to be resumed elsewhere once their locks expire.
  setTimeout(
    () => {
      logger.error({ signal }, 'shutdown did not finish in time: exiting');
      process.exit(EXIT.internal);
    },
    config.shutdownGraceMs + SHUTDOWN_CLOSE_MS + 2_000,
  ).unref();
  running
    .shutdown()
    .then(({ drained }) => process.exit(drained ? EXIT.ok : EXIT.internal))
    .catch((error: unknown) => {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(EXIT.internal);
    });
}

if (signalDuringStart !== undefined) onSignal(signalDuringStart);
