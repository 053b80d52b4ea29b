import path from 'node:path';
import { createFileSystemStore, memoryStoreLimits, type FileSystemStore } from '@baton/core';
import { openFileProjectLog, type FileProjectLog, type ProjectRecord } from '@baton/projects';
import { projectNotFound } from './command-failure.js';
import { batonHome } from './project-home.js';

/** A `baton run` project on this machine: its record and where it lives. */
export interface LocalProject {
  home: string;
  record: ProjectRecord;
  dir: string;
  memories: string;
  /** Where `baton run` appends the project's events as JSON lines. */
  eventsFile: string;
  /** Where `baton run` keeps the project's session transcripts. */
  transcriptsDir: string;
}

/** The `ProjectLog` of `baton run` projects under `BATON_HOME` (upgraded once if older). */
export function openLocalProjectLog(): Promise<FileProjectLog> {
  return openFileProjectLog({ home: batonHome() });
}

function localProject(log: FileProjectLog, record: ProjectRecord): LocalProject {
  const paths = log.paths(record.id);
  return {
    home: log.home,
    record,
    dir: paths.dir,
    memories: paths.memories,
    eventsFile: paths.events,
    transcriptsDir: paths.transcripts,
  };
}

/** The local project `id` under `BATON_HOME`, or an `unknown project` failure. */
export async function requireLocalProject(id: string): Promise<LocalProject> {
  const log = await openLocalProjectLog();
  const record = await log.get(id);
  if (record === null) throw projectNotFound(id, `under ${path.join(log.home, 'projects')}`);
  return localProject(log, record);
}

/** The local project's memory: the same `FileSystemStore` layout `baton run` uses. */
export async function openLocalMemory(project: LocalProject): Promise<FileSystemStore> {
  return createFileSystemStore({ root: project.memories, limits: memoryStoreLimits() });
}
