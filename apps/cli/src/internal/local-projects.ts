import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { createFileSystemStore, memoryStoreLimits, type FileSystemStore } from '@baton/core';
import { projectNotFound } from './command-failure.js';
import { batonHome, projectPaths, readProject, type ProjectRecord } from './project-home.js';

/** A `baton run` project on this machine: its record and where it lives. */
export interface LocalProject {
  home: string;
  record: ProjectRecord;
  dir: string;
  memories: string;
  /** Where `baton run` appends the project's events as JSON lines (if it records them). */
  eventsFile: string;
  /** Where `baton run` keeps the project's session transcripts. */
  transcriptsDir: string;
}

/** The local project `id` under `BATON_HOME`, or an `unknown project` failure. */
export async function requireLocalProject(id: string): Promise<LocalProject> {
  const home = batonHome();
  const paths = projectPaths(home, id);
  const record = await readProject(paths);
  if (record === null) throw projectNotFound(id, `under ${path.join(home, 'projects')}`);
  return {
    home,
    record,
    dir: paths.dir,
    memories: paths.memories,
    eventsFile: paths.events,
    transcriptsDir: paths.transcripts,
  };
}

/** Every local project under `BATON_HOME/projects`, oldest first. */
export async function listLocalProjects(): Promise<LocalProject[]> {
  const home = batonHome();
  let names: string[];
  try {
    names = await readdir(path.join(home, 'projects'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const projects: LocalProject[] = [];
  for (const name of names.sort()) {
    const paths = projectPaths(home, name);
    const record = await readProject(paths).catch(() => null);
    if (record === null) continue;
    projects.push({
      home,
      record,
      dir: paths.dir,
      memories: paths.memories,
      eventsFile: paths.events,
      transcriptsDir: paths.transcripts,
    });
  }
  return projects.sort((a, b) => a.record.createdAt.localeCompare(b.record.createdAt));
}

/** The local project's memory: the same `FileSystemStore` layout `baton run` uses. */
export async function openLocalMemory(project: LocalProject): Promise<FileSystemStore> {
  return createFileSystemStore({ root: project.memories, limits: memoryStoreLimits() });
}
