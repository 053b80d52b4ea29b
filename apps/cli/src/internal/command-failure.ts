import { CliError, type CliErrorCode } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';

/**
 * A `CliError` with an explicit exit code, for failures that are not argument mistakes (an unknown
 * project, Redis not answering, a missing `redis-server`): `main.ts` prints its message as one
 * line and exits with `exitCode`, exactly as for any `CliError`.
 */
export class CommandFailure extends CliError {
  override readonly exitCode: number;

  constructor(
    code: CliErrorCode,
    exitCode: number,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.exitCode = exitCode;
  }
}

/** `no project ID ...`: exit code `notFound`. */
export function projectNotFound(projectId: string, where: string): CommandFailure {
  return new CommandFailure('not_found', EXIT_CODES.notFound, `no project ${projectId} ${where}.`);
}
