import { isMemoryToolError, isStoreError, parseMemoryPath, type MemoryStore } from '@baton/core';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { CommandFailure } from './command-failure.js';
import { withProjects, type ProjectAccessOptions } from './project-access.js';

/** Which project memory a command works on. */
export interface ProjectMemoryTarget extends ProjectAccessOptions {
  id: string;
}

/** What `withProjectMemory` hands the command. */
export interface ProjectMemory {
  store: MemoryStore;
}

/**
 * Opens the project's memory (checking the project exists first, so an unknown id is one clear
 * line), runs `body`, and closes what it opened. Store errors become one-line CLI errors.
 */
export async function withProjectMemory<T>(
  target: ProjectMemoryTarget,
  body: (memory: ProjectMemory) => Promise<T>,
): Promise<T> {
  return withProjects(target, async (projects) => {
    await projects.requireProject(target.id);
    const store = await projects.memoryStore(target.id);
    try {
      return await body({ store });
    } catch (error) {
      throw toCliError(error);
    } finally {
      await store.close();
    }
  });
}

function toCliError(error: unknown): unknown {
  if (isStoreError(error)) {
    return new CommandFailure(
      'internal',
      error.code === 'unavailable' ? EXIT_CODES.redisUnreachable : EXIT_CODES.internal,
      `memory store: ${error.message}`,
      { cause: error },
    );
  }
  return error;
}

/** `/memories/notes.md` or `notes.md` -> the store path `notes.md`; a refused path is a usage error. */
export function memoryPathArgument(value: string): string {
  const virtual = value.startsWith('/') ? value : `/memories/${value}`;
  try {
    return parseMemoryPath(virtual);
  } catch (error) {
    if (isMemoryToolError(error)) throw new CliError('usage', `bad memory path: ${error.message}`);
    throw error;
  }
}
