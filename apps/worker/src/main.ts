#!/usr/bin/env node
// The worker process: wiring only. Reads config, runs the worker until a signal drains it.
import { EXIT_CODES as EXIT } from '@baton/core';
import { contextVariablesNotice, loadWorkerConfig } from './config.js';
import { describeError, isWorkerError } from './errors.js';
import { runUntilSignalled } from './run-until-signalled.js';

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

try {
  const { drained } = await runUntilSignalled(config);
  process.exit(drained ? EXIT.ok : EXIT.internal);
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
