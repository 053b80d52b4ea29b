/**
 * `create`: write a new file, creating missing parent directories.
 *
 * Success: `File created successfully at: {path}`. If anything already exists at the path we
 * refuse with `Error: File {path} already exists` instead of overwriting (the spec allows either):
 * a model that re-creates a file it forgot about would otherwise silently destroy memory, and the
 * error tells it to `view` and edit instead. The check and the write are one atomic store call
 * (create-only mode), so two concurrent creates have exactly one winner, and a plain create is a
 * single store call.
 */
import type { CommandContext } from '../internal/command-context.js';
import { toMemoryToolError } from '../internal/store-error-messages.js';
import { byteLength } from '../internal/text.js';
import { MemoryToolError } from '../memory-tool-error.js';

/** Input of `create`, as validated by the tool. */
export interface CreateInput {
  command: 'create';
  path: string;
  file_text: string;
}

/** Runs `create`. */
export async function create(input: CreateInput, context: CommandContext): Promise<string> {
  const { storePath, virtualPath } = context.resolvePath(input.path);
  if (storePath === '') {
    throw new MemoryToolError(`Error: File ${virtualPath} already exists`, { code: 'exists' });
  }
  // When the handler could refuse the write itself (hook, size, quota), existence is checked
  // first, so the model hears the most useful thing first. Otherwise the create-only write below
  // is the check, and it reports an existing file with the same message.
  try {
    if (
      context.mayRefuseBeforeStore(input.file_text) &&
      (await context.store.stat(storePath)) !== null
    ) {
      throw new MemoryToolError(`Error: File ${virtualPath} already exists`, { code: 'exists' });
    }
  } catch (error) {
    throw toMemoryToolError(error, { command: 'create', path: virtualPath });
  }
  const content = context.prepareWrite({
    command: 'create',
    path: virtualPath,
    before: null,
    after: input.file_text,
  });
  const bytes = byteLength(content);
  try {
    context.assertQuota(await context.usageForQuota(), virtualPath, bytes, 1);
    await context.store.write(storePath, content, {
      ...context.mutation('create'),
      mode: 'create',
    });
  } catch (error) {
    throw toMemoryToolError(error, { command: 'create', path: virtualPath });
  }
  await context.changed({ command: 'create', path: virtualPath, bytes });
  return `File created successfully at: ${virtualPath}`;
}
