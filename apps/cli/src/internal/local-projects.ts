import { createFileSystemStore, memoryStoreLimits, type FileSystemStore } from '@baton/core';
import { openFileProjectLog, type FileProjectLog } from '@baton/projects';
import { batonHome } from './project-home.js';

/** The `ProjectLog` of `baton run` projects under `BATON_HOME` (upgraded once if older). */
export function openLocalProjectLog(): Promise<FileProjectLog> {
  return openFileProjectLog({ home: batonHome() });
}

/** A local project's memory: the same `FileSystemStore` layout `baton run` uses. */
export async function openLocalMemory(memories: string): Promise<FileSystemStore> {
  return createFileSystemStore({ root: memories, limits: memoryStoreLimits() });
}
