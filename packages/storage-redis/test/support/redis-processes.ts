import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';

const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
const REDIS_CLI = process.env.REDIS_CLI_BIN ?? '/usr/bin/redis-cli';
const execFileAsync = promisify(execFile);

/** True if nothing listens on `port` on the loopback interface. */
async function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
}

/** A free loopback port; with `alsoFree`, `port + alsoFree` must be free too (cluster bus). */
export async function freePort(alsoFree?: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    if (
      (await portIsFree(port)) &&
      (alsoFree === undefined || (await portIsFree(port + alsoFree)))
    ) {
      return port;
    }
  }
  throw new Error('no free loopback port found');
}

/** A private `redis-server` child process. */
export interface RedisServerProcess {
  port: number;
  url: string;
  directory: string;
  /** SIGKILL: no shutdown, no final fsync. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and directory (reloading the AOF). */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Options of `startRedisServer`. */
export interface RedisServerOptions {
  /** AOF with `appendfsync always`. Default false. */
  appendOnly?: boolean;
  /** Extra `--name value` arguments. */
  extraArguments?: string[];
  /** Port; default a free one. */
  port?: number;
  /** Data directory; default a fresh temporary one. */
  directory?: string;
}

async function launch(
  port: number,
  directory: string,
  options: RedisServerOptions,
): Promise<ChildProcess> {
  const child = spawn(
    REDIS_SERVER,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      directory,
      '--save',
      '',
      '--appendonly',
      options.appendOnly === true ? 'yes' : 'no',
      '--appendfsync',
      'always',
      '--maxmemory-policy',
      'noeviction',
      '--logfile',
      '',
      ...(options.extraArguments ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    child.once('error', reject);
  });
  const timeout = setTimeout(() => child.kill('SIGKILL'), 10_000);
  try {
    await ready;
  } finally {
    clearTimeout(timeout);
  }
  return child;
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** Starts a private `redis-server` on a free loopback port and waits until it accepts connections. */
export async function startRedisServer(
  options: RedisServerOptions = {},
): Promise<RedisServerProcess> {
  const port = options.port ?? (await freePort());
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), 'baton-redis-')));
  let child = await launch(port, directory, options);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    directory,
    kill: () => killChild(child),
    async restart() {
      await killChild(child);
      child = await launch(port, directory, options);
    },
    async stop() {
      await killChild(child);
      if (options.directory === undefined) {
        await rm(directory, { recursive: true, force: true });
      }
    },
  };
}

/** A private 3-master Redis Cluster (no replicas). */
export interface RedisClusterProcesses {
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/** Starts 3 cluster-enabled servers, joins them with `redis-cli --cluster create`, waits for `cluster_state:ok`. */
export async function startRedisCluster(): Promise<RedisClusterProcesses> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-redis-cluster-'));
  const servers: RedisServerProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.kill()));
    await rm(directory, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < 3; index += 1) {
      const port = await freePort(10_000);
      servers.push(
        await startRedisServer({
          port,
          directory,
          extraArguments: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `nodes-${port}.conf`,
          ],
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

async function waitForClusterOk(port: number, timeoutMs = 15_000): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  const deadline = Date.now() + timeoutMs;
  try {
    await client.connect();
    for (;;) {
      const info = String(await client.call('CLUSTER', 'INFO'));
      const slots = /cluster_slots_ok:(\d+)/u.exec(info)?.[1];
      if (info.includes('cluster_state:ok') && slots === '16384') {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`cluster node ${port} did not reach cluster_state:ok: ${info}`);
      }
      // CLUSTER INFO is cheap; poll the condition with a short pause between checks.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    client.disconnect();
  }
}
