/**
 * `delete`: delete a file, or a directory with everything below it.
 *
 * Success: `Successfully deleted {path}`. The root is refused in every spelling (`/memories`,
 * `/memories/`, `/memories/.`, `//memories`; `/memories/x/..` is already refused by the path
 * policy for its `..`), because the path policy maps them all to the one root `StorePath` `''`.
 */
import type { CommandContext } from '../internal/command-context.js';
import { toMemoryToolError } from '../internal/store-error-messages.js';
import { MemoryToolError } from '../memory-tool-error.js';

/** Input of `delete`, as validated by the tool. */
export interface DeleteInput {
  command: 'delete';
  path: string;
}

/** Runs `delete`. */
export async function deletePath(input: DeleteInput, context: CommandContext): Promise<string> {
  const { storePath, virtualPath } = context.resolvePath(input.path);
  if (storePath === '') {
    throw new MemoryToolError('Error: Cannot delete the /memories directory itself', {
      code: 'refused',
    });
  }
  try {
    await context.store.delete(storePath, context.mutation('delete'));
  } catch (error) {
    throw toMemoryToolError(error, { command: 'delete', path: virtualPath });
  }
  await context.changed({ command: 'delete', path: virtualPath, bytes: 0 });
  return `Successfully deleted ${virtualPath}`;
}
