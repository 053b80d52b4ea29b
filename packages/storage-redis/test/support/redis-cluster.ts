import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, startRedisServer, waitFor, type RedisServer } from '@baton/test-support';
import { Redis } from 'ioredis';

const REDIS_CLI = process.env.REDIS_CLI_BIN ?? 'redis-cli';
const execFileAsync = promisify(execFile);
/** A Cluster node also listens on its bus port, `port + 10000`. */
const BUS_PORT_OFFSET = 10_000;

/** A private 3-master Redis Cluster (no replicas). */
export interface RedisClusterProcesses {
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/** Starts 3 cluster-enabled servers, joins them with `redis-cli --cluster create`, waits for `cluster_state:ok`. */
export async function startRedisCluster(): Promise<RedisClusterProcesses> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-redis-cluster-'));
  const servers: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(directory, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < 3; index += 1) {
      const port = await freePort({ alsoFreeAt: BUS_PORT_OFFSET });
      servers.push(
        await startRedisServer({
          port,
          directory,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
        }),
      );
    }
    const nodes = servers.map((server) => ({ host: '127.0.0.1', port: server.port }));
    await execFileAsync(REDIS_CLI, [
      '--cluster',
      'create',
      ...nodes.map((node) => `${node.host}:${node.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const node of nodes) {
      await waitForClusterOk(node.port);
    }
    return { nodes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForClusterOk(port: number): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  try {
    await client.connect();
    await waitFor(
      `cluster node ${port} to reach cluster_state:ok with all 16384 slots`,
      async () => {
        const info = String(await client.call('CLUSTER', 'INFO'));
        const slots = /cluster_slots_ok:(\d+)/u.exec(info)?.[1];
        return info.includes('cluster_state:ok') && slots === '16384';
      },
      15_000,
    );
  } finally {
    client.disconnect();
  }
}
