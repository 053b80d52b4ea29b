export { EXIT_CODES } from './exit-codes.js';
export type { ExitCodeName } from './exit-codes.js';
export { CliError } from './errors.js';
export type { CliErrorCode } from './errors.js';
