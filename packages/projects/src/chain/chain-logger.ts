/**
 * What the chain logs through: pino's `Logger` fits it (the worker passes its own logger and each
 * step binds its project, job and session number); `baton run` passes none and shows the events instead.
 */
export interface ChainLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Logs nothing. */
export const SILENT_CHAIN_LOGGER: ChainLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
};

/**
 * A logger that adds `bound` to every line, so each line of one chained session names its project,
 * job and session number wherever the chain itself was built with the worker's base logger.
 */
export function bindChainLogger(logger: ChainLogger, bound: object): ChainLogger {
  return {
    debug: (fields, message) => logger.debug({ ...bound, ...fields }, message),
    info: (fields, message) => logger.info({ ...bound, ...fields }, message),
    warn: (fields, message) => logger.warn({ ...bound, ...fields }, message),
  };
}
