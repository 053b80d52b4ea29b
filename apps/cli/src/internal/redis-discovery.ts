import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import type { RedisTarget } from '@baton/projects';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { CommandFailure } from './command-failure.js';
import { redisTargetFromEnvironment, toCommandFailure } from './remote-control.js';
import { CLI_ENV_VARIABLES } from './environment.js';

/** Where the Redis that `baton up` uses came from. */
type RedisSource = 'env' | 'probe' | 'child';

/** The Redis `baton up` runs on. */
export interface DiscoveredRedis {
  /** One node, or the Cluster of `REDIS_CLUSTER_NODES`. */
  target: RedisTarget;
  source: RedisSource;
  /** The `redis-server` child's data directory (append-only file), when `source` is `child`. */
  dataDirectory: string | null;
  /** The child's pid, when `source` is `child`. */
  pid: number | null;
  /** Stops the child (SIGTERM: Redis flushes its append-only file and exits); no-op otherwise. */
  stop(): Promise<void>;
}

/** Options of `discoverRedis`. */
export interface RedisDiscoveryOptions {
  /** Environment: `REDIS_CLUSTER_NODES`, `REDIS_URL`, `BATON_REDIS_PROBE_URL`. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** `BATON_HOME` (absolute); the child keeps its data in `<home>/redis/`. */
  home: string;
  /** The `redis-server` binary. Default `redis-server` (looked up on PATH). */
  binary?: string;
  /** How long the child gets to answer PING (ms). Default 10 000. */
  startTimeoutMs?: number;
  /** Lines for the user. */
  log?: (line: string) => void;
}

/** The command that installs a Redis server on Debian and Ubuntu. */
const REDIS_INSTALL_HINT = 'apt-get install redis-server';

/**
 * `REDIS_CLUSTER_NODES` or `REDIS_URL` when set (used as is, never replaced by a fallback), else
 * the local default `redis://127.0.0.1:6379` if it answers PING (`BATON_REDIS_PROBE_URL` overrides
 * the address probed, so tests can point it at a closed port), else a `redis-server` child on a
 * free loopback port with append-only persistence under `<home>/redis/`.
 */
export async function discoverRedis(options: RedisDiscoveryOptions): Promise<DiscoveredRedis> {
  const env = options.env ?? process.env;
  const given = [env.REDIS_CLUSTER_NODES, env.REDIS_URL].some(
    (value) => value !== undefined && value.trim() !== '',
  );
  if (given) return external(await redisTargetFromEnvironment(env), 'env');
  const { DEFAULT_REDIS_URL, answersPing, parseRedisUrl } = await import('@baton/projects');
  let probe: RedisTarget;
  try {
    probe = parseRedisUrl(
      env[CLI_ENV_VARIABLES.redisProbeUrl]?.trim() || DEFAULT_REDIS_URL,
      CLI_ENV_VARIABLES.redisProbeUrl,
    );
  } catch (error) {
    throw toCommandFailure(error);
  }
  if (await answersPing(probe, 1_000)) return external(probe, 'probe');
  return startRedisChild(options);
}

function external(target: RedisTarget, source: RedisSource): DiscoveredRedis {
  return { target, source, dataDirectory: null, pid: null, stop: () => Promise.resolve() };
}

/** A free TCP port on the loopback interface (the OS picks it; a race with another process is retried by the caller). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function startRedisChild(options: RedisDiscoveryOptions): Promise<DiscoveredRedis> {
  const dataDirectory = path.join(options.home, 'redis');
  await mkdir(dataDirectory, { recursive: true, mode: 0o700 });
  const binary = options.binary ?? 'redis-server';
  // A port picked by the OS can be taken before redis-server binds it: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freeLoopbackPort();
    try {
      return await spawnOnPort(binary, port, dataDirectory, options);
    } catch (error) {
      if (error instanceof CliError) throw error;
      lastError = error;
    }
  }
  throw new CommandFailure(
    'internal',
    EXIT_CODES.redisUnreachable,
    `could not start redis-server: ${describe(lastError)}.`,
    { cause: lastError },
  );
}

async function spawnOnPort(
  binary: string,
  port: number,
  dataDirectory: string,
  options: RedisDiscoveryOptions,
): Promise<DiscoveredRedis> {
  const logFile = path.join(dataDirectory, 'redis.log');
  const log = await open(logFile, 'a', 0o600);
  const args = [
    '--bind',
    '127.0.0.1',
    '--port',
    String(port),
    '--dir',
    dataDirectory,
    '--appendonly',
    'yes',
    '--save',
    '',
    '--daemonize',
    'no',
    // BullMQ needs keys never to be evicted.
    '--maxmemory-policy',
    'noeviction',
    '--protected-mode',
    'yes',
  ];
  let child: ChildProcess;
  let exited: Promise<{ code: number | null; error?: NodeJS.ErrnoException }>;
  try {
    // Its own process group: a terminal's Ctrl-C reaches only baton, which stops Redis last,
    // after the worker has drained (Redis dying first would fail the sessions still ending).
    child = spawn(binary, args, { stdio: ['ignore', log.fd, log.fd], detached: true });
    // Listen before any await: a missing binary is reported as an 'error' event on the next tick.
    exited = new Promise((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, error }));
      child.once('exit', (code) => resolve({ code }));
    });
  } finally {
    await log.close();
  }
  const { answersPing } = await import('@baton/projects');
  const url = `redis://127.0.0.1:${port}`;
  const target: RedisTarget = { kind: 'single', url };
  const deadline = Date.now() + (options.startTimeoutMs ?? 10_000);
  let done: { code: number | null; error?: NodeJS.ErrnoException } | undefined;
  void exited.then((result) => (done = result));
  while (Date.now() < deadline) {
    if (done !== undefined) break;
    if (await answersPing(target, 500)) {
      options.log?.(`Started redis-server on ${url} (data in ${dataDirectory}).`);
      // If baton dies without its shutdown path (an uncaught error), still take Redis down.
      const onExit = () => child.kill('SIGTERM');
      process.once('exit', onExit);
      let stopping: Promise<void> | undefined;
      return {
        target,
        source: 'child',
        dataDirectory,
        pid: child.pid ?? null,
        stop() {
          process.off('exit', onExit);
          stopping ??= stopChild(child, exited);
          return stopping;
        },
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (done?.error?.code === 'ENOENT') {
    throw new CommandFailure(
      'internal',
      EXIT_CODES.redisServerMissing,
      `no Redis answers and no redis-server binary was found: install one with \`${REDIS_INSTALL_HINT}\` or set REDIS_URL.`,
    );
  }
  if (done === undefined) child.kill('SIGKILL');
  throw new Error(
    done === undefined
      ? `redis-server did not answer on port ${port} in time (see ${logFile})`
      : `redis-server exited with code ${done.code ?? 'unknown'}${done.error ? ` (${done.error.message})` : ''} (see ${logFile})`,
  );
}

async function stopChild(
  child: ChildProcess,
  exited: Promise<{ code: number | null }>,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // SIGTERM makes redis-server fsync its append-only file and exit cleanly.
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
