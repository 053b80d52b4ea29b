/**
 * The one place that turns a `StoreError` into what the model reads. Store messages are plain
 * sentences without host paths, but the protocol fixes the wording per command, so the message
 * is chosen from the code and the command here; quota messages quote the limit the store reports.
 */
import { MemoryToolError } from '../memory-tool-error.js';
import type { MemoryCommandName } from '../memory-tool-options.js';
import { StoreError } from '../store.js';

/** What the failing call was doing, with canonical virtual paths. */
export interface StoreCallContext {
  command: MemoryCommandName;
  /** The path the command names (`old_path` for rename). */
  path: string;
  /** `new_path` for rename. */
  newPath?: string;
}

/** Missing-path message for a command, exactly as the spec writes it. */
export function notFoundMessage(command: MemoryCommandName, path: string): string {
  switch (command) {
    case 'view':
      return `The path ${path} does not exist. Please provide a valid path.`;
    case 'str_replace':
      return `Error: The path ${path} does not exist. Please provide a valid path.`;
    case 'insert':
    case 'delete':
    case 'rename':
    case 'create':
      return `Error: The path ${path} does not exist`;
  }
}

/**
 * Converts anything a store call threw into a `MemoryToolError`. A `MemoryToolError` (thrown by a
 * transform or hook inside `edit`) passes through unchanged; anything that is not a `StoreError`
 * is a bug or an infrastructure failure and becomes code `internal` with a generic message.
 */
export function toMemoryToolError(error: unknown, context: StoreCallContext): MemoryToolError {
  if (error instanceof MemoryToolError) return error;
  if (!(error instanceof StoreError)) {
    return new MemoryToolError(
      `Error: The memory tool failed unexpectedly while running ${context.command}.`,
      { code: 'internal', cause: error },
    );
  }
  const { command, path } = context;
  const newPath = context.newPath ?? path;
  const fail = (code: MemoryToolError['code'], message: string): MemoryToolError =>
    new MemoryToolError(message, { code, cause: error });

  switch (error.code) {
    case 'not_found':
      return fail('not_found', notFoundMessage(command, path));
    case 'is_directory':
      // The spec answers str_replace and insert on a directory like a missing file.
      if (command === 'create') return fail('exists', `Error: File ${path} already exists`);
      return fail('not_found', notFoundMessage(command, path));
    case 'exists':
      if (command === 'rename') {
        return fail('exists', `Error: The destination ${newPath} already exists`);
      }
      return fail('exists', `Error: File ${path} already exists`);
    case 'not_a_directory':
      if (command === 'rename') {
        return fail(
          'refused',
          `Error: Cannot rename ${path} to ${newPath}: a parent of the destination is a file, not a directory.`,
        );
      }
      if (command === 'view') return fail('not_found', notFoundMessage(command, path));
      return fail(
        'refused',
        `Error: Cannot create ${path}: a parent of it is a file, not a directory.`,
      );
    case 'into_itself':
      return fail('refused', `Error: Cannot move the directory ${path} into itself (${newPath}).`);
    case 'invalid_path':
      // The root is refused by the commands before any store call, so here the store refused
      // the path for its own reasons (a symbolic link, a reserved name).
      if (command === 'rename') {
        return fail(
          'invalid_path',
          `Error: Cannot rename ${path} to ${newPath}: one of the paths is not allowed.`,
        );
      }
      return fail('invalid_path', `Error: The path ${path} is not allowed.`);
    case 'quota_exceeded':
      return fail('limit', quotaMessage(error, path));
    case 'conflict':
      return fail(
        'unavailable',
        `Error: ${path} kept changing while this ${command} tried to apply. Nothing was changed; try again.`,
      );
    case 'corrupt':
      // Not the store being away: the same call fails the same way until someone repairs it.
      return fail(
        'internal',
        `Error: The memory store's data for ${path} is damaged, so ${command} cannot run. Nothing was changed; retrying will not help.`,
      );
    case 'unavailable':
      return fail(
        'unavailable',
        'Error: The memory store is unavailable right now. Try again later.',
      );
  }
}

/**
 * The model's message for a limit the store enforced. Store sentences name store paths and vary
 * by backend, so the handler writes its own per limit, quoting the limit's value when the store
 * reported it in `maximum`.
 */
function quotaMessage(error: StoreError, path: string): string {
  const limit = error.maximum;
  const cleanUp = 'Nothing was changed; delete files you no longer need.';
  switch (error.limit) {
    case 'maxFileBytes':
      return limit === undefined
        ? `Error: File ${path} would be over the memory store's size limit per file. Nothing was changed.`
        : `Error: File ${path} would be over the limit of ${limit} bytes per file. Nothing was changed.`;
    case 'maxTotalBytes':
      return limit === undefined
        ? `Error: Cannot write ${path}: the memory directory would go over its limit on total size. ${cleanUp}`
        : `Error: Cannot write ${path}: the memory directory would go over its limit of ${limit} bytes in total. ${cleanUp}`;
    case 'maxFiles':
      return limit === undefined
        ? `Error: Cannot write ${path}: the memory directory would go over its limit on the number of files. ${cleanUp}`
        : `Error: Cannot write ${path}: the memory directory would go over its limit of ${limit} files. ${cleanUp}`;
    case undefined:
      return `Error: Cannot write ${path}: the memory store refused it as over a limit. ${cleanUp}`;
  }
}
