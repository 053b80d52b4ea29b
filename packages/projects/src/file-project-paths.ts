import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** Version of `project.json` this code writes; a run-once migration upgrades older files. */
export const FILE_PROJECT_RECORD_VERSION = 2;

/** Where one project's files live under `BATON_HOME`. */
export interface FileProjectPaths {
  dir: string;
  /** The `ProjectRecord`, as JSON with a `v` field. */
  record: string;
  memories: string;
  /** The default working tree of a `baton run` project. */
  workspace: string;
  /** Every event of the project as JSON lines (`baton logs --local` follows it). */
  events: string;
  /** One summary per finished session, as JSON lines. */
  sessions: string;
  /** The check record (verified progress): feature id → its last check run, as JSON. */
  checks: string;
  /** One status change per line. */
  transitions: string;
  /** One JSON-lines transcript per session. */
  transcripts: string;
  /** Operator guidance (`baton say --local`), one message per line. */
  guidance: string;
  /** Which session acknowledged which guidance, one acknowledgement per line. */
  guidanceAcks: string;
}

/** The files of project `id` under `home`. */
export function fileProjectPaths(home: string, id: string): FileProjectPaths {
  const dir = path.join(home, 'projects', id);
  return {
    dir,
    record: path.join(dir, 'project.json'),
    memories: path.join(dir, 'memories'),
    workspace: path.join(dir, 'workspace'),
    events: path.join(dir, 'events.jsonl'),
    sessions: path.join(dir, 'sessions.jsonl'),
    transitions: path.join(dir, 'transitions.jsonl'),
    checks: path.join(dir, 'checks.json'),
    transcripts: path.join(dir, 'transcripts'),
    guidance: path.join(dir, 'guidance.jsonl'),
    guidanceAcks: path.join(dir, 'guidance-acks.jsonl'),
  };
}

/**
 * The name of every entry under `<home>/projects` (none without it): each project's directory,
 * as `fileProjectPaths` names it. What is not a project is found so by reading its files.
 */
export async function localProjectNames(home: string): Promise<string[]> {
  try {
    return await readdir(path.join(home, 'projects'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
