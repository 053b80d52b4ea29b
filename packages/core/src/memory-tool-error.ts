/** Why a memory command failed. */
export type MemoryToolErrorCode =
  /** The input is not a valid command (unknown command, missing or mistyped field). */
  | 'invalid_input'
  /** The path is refused by the path policy (outside `/memories`, traversal, bad characters, too long). */
  | 'invalid_path'
  /** Nothing at the path (or a directory where a file is needed). */
  | 'not_found'
  /** Something already exists where the command would create something. */
  | 'exists'
  /** The command is well formed but not allowed (root deletion, ambiguous str_replace, a hook's veto). */
  | 'refused'
  /** A size or count limit would be exceeded. */
  | 'limit'
  /** The store could not be reached or failed unexpectedly. */
  | 'unavailable'
  /** A bug or an unexpected error (details go to `hooks.onUnexpectedError`, never to the model). */
  | 'internal';

/** Options of `MemoryToolError`. */
export interface MemoryToolErrorOptions {
  /** Default `refused`: the code a hook means when it throws `new MemoryToolError(message)`. */
  code?: MemoryToolErrorCode;
  /** The underlying error, when wrapping one. */
  cause?: unknown;
}

/**
 * The one error type of the memory tool. Its `message` is exactly what the model reads as an
 * `is_error` tool result (a protocol string from the spec, or a short plain sentence), so it never
 * contains host paths or stack traces.
 *
 * A `beforeWrite` hook throws `new MemoryToolError('...')` to refuse a write.
 */
export class MemoryToolError extends Error {
  override readonly name = 'MemoryToolError';
  readonly code: MemoryToolErrorCode;

  constructor(message: string, options: MemoryToolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? 'refused';
  }
}

/** True if `error` is a `MemoryToolError`, optionally with the given code. */
export function isMemoryToolError(
  error: unknown,
  code?: MemoryToolErrorCode,
): error is MemoryToolError {
  return error instanceof MemoryToolError && (code === undefined || error.code === code);
}
