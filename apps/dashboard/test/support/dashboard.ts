import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createBatonControl,
  createSessionQueue,
  ProjectRepository,
  producerConnectionOptions,
  type BatonControl,
} from '@baton/projects';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { deletePrefix, randomHex, REDIS_URL } from '@baton/test-support';
import {
  createDashboardServer,
  type DashboardServer,
  type DashboardServerOptions,
} from '../../src/index.js';

export interface TestDashboard {
  control: BatonControl;
  /** For seeding what only a worker writes (events, session summaries). */
  repository: ProjectRepository;
  server: DashboardServer;
  prefix: string;
  memoryPrefix: string;
  workspaceRoot: string;
  /** `fetch` against the server with the Host/Origin a same-origin browser would send. */
  request(pathname: string, init?: RequestInit): Promise<Response>;
  /** GETs `pathname` and parses the body (`any`: the assertions are the type checks). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  json(pathname: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** A dashboard on a free loopback port over a real control API under a private Redis prefix. */
export async function startTestDashboard(
  options: Partial<DashboardServerOptions> & { withQueueBoard?: boolean } = {},
): Promise<TestDashboard> {
  const { withQueueBoard, ...serverOptions } = options;
  const id = randomHex();
  const prefix = `{bd-${id}}`;
  const workspaceRoot = await mkdtemp(path.join(tmpdir(), 'baton-dashboard-'));
  const control = createBatonControl({ url: REDIS_URL, prefix, cwd: workspaceRoot });
  // Derived from the prefix (`bd-<id>`), as the workers' is.
  const { memoryPrefix } = control.keys;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const repository = new ProjectRepository({ redis, keys: control.keys });
  const queueConnection = new Redis(REDIS_URL, producerConnectionOptions());
  queueConnection.on('error', () => undefined);
  const queue = withQueueBoard
    ? createSessionQueue({ connection: queueConnection, keys: control.keys })
    : undefined;
  const server = await createDashboardServer({
    control,
    redis,
    port: 0,
    pollIntervalMs: 50,
    pingIntervalMs: 1_000,
    onError: () => undefined,
    logger: pino({ level: 'silent' }),
    // Never pick up BATON_DASHBOARD_TOKEN from the environment (CI passes it through).
    token: '',
    queue,
    ...serverOptions,
  });
  return {
    control,
    repository,
    server,
    prefix,
    memoryPrefix,
    workspaceRoot,
    request(pathname, init = {}) {
      return fetch(new URL(pathname, server.url), init);
    },
    async json(pathname) {
      const response = await fetch(new URL(pathname, server.url));
      return { status: response.status, body: await response.json() };
    },
    async close() {
      await server.close();
      const projects = await control.listProjects().catch(() => []);
      for (const project of projects)
        await control.deleteProject(project.id).catch(() => undefined);
      await queue?.close();
      await control.close();
      redis.disconnect();
      queueConnection.disconnect();
      await deletePrefix(prefix);
      await deletePrefix(`${memoryPrefix}:`);
      await rm(workspaceRoot, { recursive: true, force: true });
    },
  };
}
