import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { waitFor } from './wait-for.js';

const execFileAsync = promisify(execFile);
/** A Cluster node also listens on its bus port, `port + 10000`. */
const BUS_PORT_OFFSET = 10_000;

/** Options of `startRedisCluster`. */
export interface RedisClusterOptions {
  /** `requirepass` (and `masterauth`) of every node. Default: none. */
  password?: string;
  /** Masters. Default 3 (the smallest cluster `redis-cli --cluster create` accepts). */
  masters?: number;
}

/** A private Redis Cluster of masters only, on 127.0.0.1. */
export interface RedisClusterProcesses {
  nodes: Array<{ host: string; port: number }>;
  /** The node processes, in `nodes` order (to kill or restart one). */
  servers: RedisServer[];
  /** `REDIS_CLUSTER_NODES` for this cluster (`host:port,...`, or URLs with the password). */
  clusterNodesVariable: string;
  stop(): Promise<void>;
}

/**
 * Starts cluster-enabled servers, joins them with `redis-cli --cluster create` (`REDIS_CLI_BIN`,
 * default `redis-cli`), and waits until every node reports `cluster_state:ok` with all slots.
 */
export async function startRedisCluster(
  options: RedisClusterOptions = {},
): Promise<RedisClusterProcesses> {
  const redisCli = process.env.REDIS_CLI_BIN ?? 'redis-cli';
  const directory = await mkdtemp(join(tmpdir(), 'baton-redis-cluster-'));
  const servers: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(directory, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < (options.masters ?? 3); index += 1) {
      const port = await freePort({ alsoFreeAt: BUS_PORT_OFFSET });
      servers.push(
        await startRedisServer({
          port,
          directory,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
          ...(options.password === undefined ? {} : { password: options.password }),
        }),
      );
    }
    const nodes = servers.map((server) => ({ host: '127.0.0.1', port: server.port }));
    await execFileAsync(
      redisCli,
      [
        ...(options.password === undefined ? [] : ['-a', options.password, '--no-auth-warning']),
        '--cluster',
        'create',
        ...nodes.map((node) => `${node.host}:${node.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    for (const node of nodes) {
      await waitForClusterOk(node.port, options.password);
    }
    const secret =
      options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
    const clusterNodesVariable = nodes
      .map((node) =>
        secret === '' ? `${node.host}:${node.port}` : `redis://${secret}${node.host}:${node.port}`,
      )
      .join(',');
    return { nodes, servers, clusterNodesVariable, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForClusterOk(port: number, password: string | undefined): Promise<void> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    ...(password === undefined ? {} : { password }),
  });
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
