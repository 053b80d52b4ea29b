import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
  /** Replicas of each master (`--cluster-replicas`). Default 0. */
  replicasPerMaster?: number;
  /** `cluster-node-timeout`: how long a master may be silent before its replica takes over. Default Redis's 15 000 ms. */
  nodeTimeoutMs?: number;
  /**
   * Clients talk TLS: every node gets a `tls-port` with a certificate for 127.0.0.1 signed by a
   * private CA (`caFile`), and the cluster bus and replication run on TLS too. Each node keeps its
   * plain port for the test's own probes. Default false.
   */
  tls?: boolean;
}

/** One node of the cluster: where clients reach it. */
export interface RedisClusterNode {
  host: string;
  /** The client port: the TLS port when `tls` is on. */
  port: number;
}

/** A private Redis Cluster on 127.0.0.1. */
export interface RedisClusterProcesses {
  /** Every node, masters first (as created: replicas are assigned by `redis-cli`). */
  nodes: RedisClusterNode[];
  /** The node processes, in `nodes` order (to kill or restart one). */
  servers: RedisServer[];
  /**
   * `REDIS_CLUSTER_NODES` for this cluster (`host:port,...`, or URLs with the password or
   * `rediss://` when `tls` is on).
   */
  clusterNodesVariable: string;
  /** The private CA's certificate (PEM) when `tls` is on, for `NODE_EXTRA_CA_CERTS`. */
  caFile: string | null;
  /** The client port of the node that serves `key`'s slot as master now. */
  masterOf(key: string): Promise<number>;
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
    const certificates = options.tls === true ? await createCertificates(directory) : null;
    const count = (options.masters ?? 3) * (1 + (options.replicasPerMaster ?? 0));
    const nodes: RedisClusterNode[] = [];
    for (let index = 0; index < count; index += 1) {
      const port = await freePort({ alsoFreeAt: BUS_PORT_OFFSET });
      const tlsPort = certificates === null ? null : await freePort();
      servers.push(
        await startRedisServer({
          port,
          directory,
          args: [
            ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
            ...(options.nodeTimeoutMs === undefined
              ? []
              : ['--cluster-node-timeout', String(options.nodeTimeoutMs)]),
            ...(certificates === null || tlsPort === null
              ? []
              : [
                  ...['--tls-port', String(tlsPort), '--tls-cluster', 'yes'],
                  ...['--tls-replication', 'yes', '--tls-auth-clients', 'no'],
                  ...['--tls-cert-file', certificates.certFile],
                  ...['--tls-key-file', certificates.keyFile],
                  ...['--tls-ca-cert-file', certificates.caFile],
                ]),
          ],
          password: options.password,
        }),
      );
      nodes.push({ host: '127.0.0.1', port: tlsPort ?? port });
    }
    // Joined through the plain ports; with `tls-cluster` the nodes then tell TLS clients their TLS ports.
    const plain = servers.map((server) => ({ host: '127.0.0.1', port: server.port }));
    await execFileAsync(
      redisCli,
      [
        ...(options.password === undefined ? [] : ['-a', options.password, '--no-auth-warning']),
        '--cluster',
        'create',
        ...plain.map((node) => `${node.host}:${node.port}`),
        '--cluster-replicas',
        String(options.replicasPerMaster ?? 0),
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    for (const node of plain) {
      await waitForClusterOk(node.port, options.password, options.replicasPerMaster ?? 0);
    }
    const secret =
      options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
    const scheme = certificates === null ? 'redis' : 'rediss';
    const clusterNodesVariable = nodes
      .map((node) =>
        secret === '' && certificates === null
          ? `${node.host}:${node.port}`
          : `${scheme}://${secret}${node.host}:${node.port}`,
      )
      .join(',');
    const masterOf = async (key: string): Promise<number> => {
      const alive = servers.findIndex((server) => server.running);
      const client = probeClient(plain[alive]?.port ?? 0, options.password);
      try {
        await client.connect();
        const slot = Number(await client.call('CLUSTER', 'KEYSLOT', key));
        const ranges = (await client.call('CLUSTER', 'SLOTS')) as Array<
          [number, number, [string, number, string, ...unknown[]]]
        >;
        const owner = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2];
        if (owner === undefined) throw new Error(`no master serves slot ${slot}`);
        // CLUSTER SLOTS answers a plain connection with plain ports: map back to client ports.
        const index = plain.findIndex((node) => node.port === Number(owner[1]));
        return nodes[index]?.port ?? Number(owner[1]);
      } finally {
        client.disconnect();
      }
    };
    return {
      nodes,
      servers,
      clusterNodesVariable,
      caFile: certificates?.caFile ?? null,
      masterOf,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function probeClient(port: number, password: string | undefined): Redis {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    password,
  });
  client.on('error', () => undefined);
  return client;
}

async function waitForClusterOk(
  port: number,
  password: string | undefined,
  replicasPerMaster: number,
): Promise<void> {
  const client = probeClient(port, password);
  try {
    await client.connect();
    await waitFor(
      `cluster node ${port} to reach cluster_state:ok with all 16384 slots${replicasPerMaster > 0 ? ' and every replica in sync' : ''}`,
      async () => {
        const info = String(await client.call('CLUSTER', 'INFO'));
        const slots = /cluster_slots_ok:(\d+)/u.exec(info)?.[1];
        if (!info.includes('cluster_state:ok') || slots !== '16384') return false;
        const replication = String(await client.info('replication'));
        if (replication.includes('role:slave')) {
          return replication.includes('master_link_status:up');
        }
        const replicas = Number(/connected_slaves:(\d+)/u.exec(replication)?.[1] ?? '0');
        return replicas >= replicasPerMaster;
      },
      30_000,
    );
  } finally {
    client.disconnect();
  }
}

/** A private CA and a certificate for 127.0.0.1/localhost signed by it (openssl, RSA 2048). */
async function createCertificates(
  directory: string,
): Promise<{ caFile: string; certFile: string; keyFile: string }> {
  const file = (name: string) => join(directory, name);
  const openssl = (args: string[]) => execFileAsync('openssl', args, { timeout: 30_000 });
  await openssl(
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2'].concat([
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.crt'),
      '-subj',
      '/CN=baton-test-ca',
    ]),
  );
  await writeFile(
    file('node.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n',
  );
  await openssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1'].concat([
      '-keyout',
      file('node.key'),
      '-out',
      file('node.csr'),
    ]),
  );
  await openssl(
    ['x509', '-req', '-in', file('node.csr'), '-CA', file('ca.crt')]
      .concat(['-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2'])
      .concat(['-extfile', file('node.ext'), '-out', file('node.crt')]),
  );
  return { caFile: file('ca.crt'), certFile: file('node.crt'), keyFile: file('node.key') };
}
