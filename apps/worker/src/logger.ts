import { redactValue } from '@baton/core';
import { pino, type Logger } from 'pino';

/**
 * JSON logs on stdout; every line from a session carries projectId, sessionId and jobId. Log lines
 * leave the machine (log shippers, support tickets), so every string in a line is redacted with
 * `@baton/core`'s secret rules, and an error under `err` is written with its stack and its cause
 * chain (redacted too).
 */
export function createLogger(options: { level: string; workerId: string }): Logger {
  return pino({
    level: options.level,
    base: { workerId: options.workerId, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: (error: Error) => redactValue(pino.stdSerializers.errWithCause(error)) },
    hooks: {
      logMethod(args, method) {
        method.apply(this, redactValue(args));
      },
    },
  });
}
