/**
 * `rename`: move a file or a directory (with all its descendants) to `new_path`, creating missing
 * parent directories of the destination.
 *
 * Success: `Successfully renamed {old_path} to {new_path}`. Never overwrites: if anything is at
 * `new_path`, `Error: The destination {new_path} already exists`; the check and the move are one
 * atomic store call, so two concurrent renames onto one destination have exactly one winner.
 * Refuses the root as source (`Error: Cannot rename the /memories directory itself`) or
 * destination (it always exists) in every spelling, and a directory moved into its own subtree.
 */
import type { CommandContext } from '../internal/command-context.js';
import { toMemoryToolError } from '../internal/store-error-messages.js';
import { MemoryToolError } from '../memory-tool-error.js';
import type { EntryStat } from '../store.js';

/** Input of `rename`, as validated by the tool. */
export interface RenameInput {
  command: 'rename';
  old_path: string;
  new_path: string;
}

/** Runs `rename`. */
export async function rename(input: RenameInput, context: CommandContext): Promise<string> {
  const from = context.resolvePath(input.old_path);
  const to = context.resolvePath(input.new_path);
  if (from.storePath === '') {
    throw new MemoryToolError('Error: Cannot rename the /memories directory itself', {
      code: 'refused',
    });
  }
  if (to.storePath === '' || to.storePath === from.storePath) {
    throw new MemoryToolError(`Error: The destination ${to.virtualPath} already exists`, {
      code: 'exists',
    });
  }
  const storeContext = {
    command: 'rename' as const,
    path: from.virtualPath,
    newPath: to.virtualPath,
  };
  let stat: EntryStat | null;
  try {
    // Only for the change event's size; the move itself is one atomic call below.
    stat = await context.store.stat(from.storePath);
    await context.store.rename(from.storePath, to.storePath, context.mutation('rename'));
  } catch (error) {
    throw toMemoryToolError(error, storeContext);
  }
  await context.changed({
    command: 'rename',
    path: from.virtualPath,
    newPath: to.virtualPath,
    bytes: stat?.kind === 'file' ? stat.size : 0,
  });
  return `Successfully renamed ${from.virtualPath} to ${to.virtualPath}`;
}
