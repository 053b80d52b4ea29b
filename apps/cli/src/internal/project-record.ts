import type { ProjectRecord } from '@baton/projects';
import { projectNotFound } from './command-failure.js';
import { requireLocalProject } from './local-projects.js';
import { withControl } from './remote-control.js';

/**
 * A project's record for a read-only verb: from the files under `BATON_HOME` with `--local`, else
 * from Redis. Both keep the same `ProjectRecord`, so the verb has no branch of its own.
 */
export async function requireProjectRecord(
  id: string,
  options: { local: boolean },
): Promise<ProjectRecord> {
  if (options.local) return (await requireLocalProject(id)).record;
  const project = await withControl((control) => control.getProject(id));
  if (project === null) {
    throw projectNotFound(id, 'on Redis (see `baton status`; --local for `baton run` projects)');
  }
  return project;
}
