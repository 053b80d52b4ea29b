import { EXIT_CODES } from './exit-codes.js';

/** Why a CLI command failed. */
export type CliErrorCode = 'usage' | 'not_found' | 'internal';

/** The one error base of the CLI: its message is printed as one line, and the process exits with `exitCode`. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly code: CliErrorCode;
  readonly exitCode: number;

  constructor(code: CliErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.exitCode = code === 'internal' ? EXIT_CODES.internal : EXIT_CODES.usage;
  }
}
