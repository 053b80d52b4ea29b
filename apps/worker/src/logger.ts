import { redactValue, serializeError } from '@baton/core';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * JSON logs on stdout; every line from a session carries projectId, sessionId and jobId. Log lines
 * leave the machine (log shippers, support tickets), so every string in a line is redacted with
 * `@baton/core`'s secret rules, and an error under `err` is written with its stack and its cause
 * chain (redacted too).
 */
export function createLogger(options: {
  level: string;
  workerId: string;
  /** Where lines go. Default stdout. */
  destination?: DestinationStream;
}): Logger {
  const settings: LoggerOptions = {
    level: options.level,
    base: { workerId: options.workerId, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: serializeError },
    hooks: {
      logMethod(args, method) {
        method.apply(this, redactValue(args));
      },
    },
  };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}
