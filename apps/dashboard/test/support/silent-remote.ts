import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { ProjectRepository } from '@baton/projects';
import { projectBranch } from '@baton/workspace';

/**
 * A git remote that accepts connections and never answers, so a `git fetch` from it is held open
 * for as long as a test needs; after `release()` every connection is cut at once (the fetch fails).
 */
export interface SilentRemote {
  /** An http URL a project's `repo` can name. */
  url: string;
  /** Connections accepted so far (held or cut). */
  readonly connections: number;
  /** Cuts the held connections and every later one. */
  release(): void;
  close(): Promise<void>;
}

export async function startSilentRemote(): Promise<SilentRemote> {
  const held: Socket[] = [];
  let connections = 0;
  let released = false;
  const server = createServer((socket) => {
    connections++;
    if (released) socket.destroy();
    else held.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => {
    released = true;
    for (const socket of held.splice(0)) socket.destroy();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/repo.git`,
    get connections() {
      return connections;
    },
    release,
    close() {
      release();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A project whose remote is `repo`, stored as a worker would have it (no creation-time checks). */
export async function seedRemoteProject(
  repository: ProjectRepository,
  id: string,
  repo: string,
): Promise<string> {
  await repository.create({
    id,
    goal: '- one',
    workspace: null,
    adoptWorkspace: false,
    repo,
    base: 'main',
    baseCommit: '0'.repeat(40),
    branch: projectBranch(id),
    skipHooks: false,
    lastCheckpoint: null,
    model: null,
    fallbackModel: null,
    budgets: {},
    contextPreset: 'coding',
    context: { preset: 'coding' },
    sandbox: null,
    verification: null,
    createdAt: Date.now(),
  });
  return id;
}
