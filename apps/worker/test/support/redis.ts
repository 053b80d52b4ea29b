import { randomHex, waitFor } from '@baton/test-support';
import type { BatonControl, ProjectRecord } from '@baton/projects';

/** A fresh `{hash tag}` prefix so every test has its own queues and project keys. */
export function randomPrefix(): string {
  return `{bt-${randomHex(5)}}`;
}

export function randomProjectId(label = 'p'): string {
  return `${label}-${randomHex(5)}`;
}

/**
 * Waits until project `id` is `completed` and returns its record; a `failed` project is
 * reported with its reason in the timeout error (waitFor keeps the last error).
 */
export function waitForCompleted(
  control: Pick<BatonControl, 'getProject'>,
  id: string,
  timeoutMs = 20_000,
): Promise<ProjectRecord> {
  return waitFor(
    `project ${id} completed`,
    async () => {
      const project = await control.getProject(id);
      if (project?.status === 'failed') throw new Error(`failed: ${project.statusReason}`);
      return project?.status === 'completed' ? project : null;
    },
    timeoutMs,
  );
}
