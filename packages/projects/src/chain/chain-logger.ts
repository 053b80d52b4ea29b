/**
 * What the chain logs through: pino's `Logger` fits it (the worker passes its job's child
 * logger); `baton run` passes none and shows the events instead.
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
