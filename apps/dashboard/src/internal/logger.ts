import { redactValue, serializeError } from '@baton/core';
import { pino, type DestinationStream, type Logger } from 'pino';
import { DashboardError } from '../errors.js';

/**
 * The dashboard's JSON logs (pino) on stderr, so stdout stays for what the CLI prints there. As
 * the worker's: every string redacted with the secret rules, errors under `err` with stack and cause.
 */
export function createDashboardLogger(
  options: { level?: string | undefined; destination?: DestinationStream } = {},
): Logger {
  const level = options.level?.trim() || 'info';
  const known = [...Object.keys(pino.levels.values), 'silent'];
  if (!known.includes(level)) {
    throw new DashboardError(
      'invalid_config',
      `LOG_LEVEL must be one of ${known.join(', ')}, got "${level}"`,
    );
  }
  return pino(
    {
      level,
      base: { component: 'dashboard', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: serializeError },
      hooks: {
        logMethod(args, method) {
          method.apply(this, redactValue(args));
        },
      },
    },
    options.destination ?? pino.destination(2),
  );
}
