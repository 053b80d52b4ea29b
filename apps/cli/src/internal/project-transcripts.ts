import type { Transcript, TranscriptSummary } from '@baton/session';
import { projectNotFound } from './command-failure.js';
import { requireLocalProject } from './local-projects.js';
import { withControl } from './remote-control.js';

/** A project's transcripts, wherever they are kept. */
export interface ProjectTranscripts {
  list(): Promise<TranscriptSummary[]>;
  read(sessionId: string): Promise<Transcript | null>;
  backend: 'redis' | 'local';
}

/**
 * Opens the transcripts of a project (checking the project exists first, so an unknown id is
 * one clear line with exit 7): a `baton run` project's files under BATON_HOME with `local`, else
 * the worker's in Redis. `body` runs while they are open.
 */
export async function withProjectTranscripts<T>(
  target: { id: string; local: boolean },
  body: (transcripts: ProjectTranscripts) => Promise<T>,
): Promise<T> {
  if (target.local) {
    const project = await requireLocalProject(target.id);
    // Loaded on use, so the other verbs do not pay for the session package.
    const { createFileTranscriptStore } = await import('@baton/session');
    const store = createFileTranscriptStore({ dir: project.transcriptsDir });
    return body({ list: () => store.list(), read: (id) => store.read(id), backend: 'local' });
  }
  return withControl(async (control) => {
    const project = await control.getProject(target.id);
    if (project === null) throw projectNotFound(target.id, 'on Redis (see `baton projects`)');
    return body({
      list: () => control.listTranscripts(target.id),
      read: (sessionId) => control.readTranscript(target.id, sessionId),
      backend: 'redis',
    });
  });
}
