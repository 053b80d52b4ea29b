import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';

/** Options of `startRedisServer`. */
export interface RedisServerOptions {
  /** AOF on, fsynced on every write (`--appendonly yes --appendfsync always`). Default false. */
  appendOnly?: boolean;
  /** More `redis-server` arguments, e.g. `['--cluster-enabled', 'yes']`. Default none. */
  args?: readonly string[];
  /** Port on 127.0.0.1. Default: a free one from `freePort()`. */
  port?: number;
  /** Data directory (AOF, nodes.conf). Default: a fresh temporary one, which `stop()` removes. */
  directory?: string;
  /** The `redis-server` binary. Default: `REDIS_SERVER_BIN`, else `redis-server` on the PATH. */
  binary?: string;
  /** How long each start may take to answer PING with its data loaded. Default 10 000 ms. */
  startTimeoutMs?: number;
  /** `requirepass` (and `masterauth`); the readiness probe authenticates with it. Default: none. */
  password?: string | undefined;
}

/** A private `redis-server` child process on 127.0.0.1. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly directory: string;
  /** Whether the process is up (false after `kill` or `stop`, true again after `restart`). */
  readonly running: boolean;
  /**
   * Sends `signal` and resolves once the process is gone. SIGKILL (the default) is a crash: no
   * shutdown, no final fsync. SIGTERM is a clean shutdown (Redis flushes the AOF). No-op if down.
   */
  kill(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts it again on the same port and directory (reloading its AOF); SIGKILLs it first if up. */
  restart(): Promise<void>;
  /**
   * Stops the process where it is (SIGSTOP): its connections stay open and nothing answers, as on
   * a link that drops every packet. `thaw` (SIGCONT) lets it answer again; `stop` works either way.
   */
  freeze(): void;
  /** Lets a frozen process run again (SIGCONT). */
  thaw(): void;
  /** SIGKILLs it for good and removes its directory if `startRedisServer` made it. */
  stop(): Promise<void>;
}

const PORT_ATTEMPTS = 3;

/** Starts a private `redis-server` and resolves once it answers PING with its data loaded. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = options.binary ?? process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), 'baton-redis-')));
  const removeOwnDirectory = async (): Promise<void> => {
    if (options.directory === undefined) await rm(directory, { recursive: true, force: true });
  };
  let port = 0;
  let child: ChildProcess | undefined;
  // A free port can be taken between the probe and redis-server's bind: then draw another.
  for (let attempt = 1; child === undefined; attempt += 1) {
    port = options.port ?? (await freePort());
    try {
      child = await launch(binary, port, directory, options);
    } catch (error) {
      const retry = options.port === undefined && attempt < PORT_ATTEMPTS && isAddressInUse(error);
      if (!retry) {
        await removeOwnDirectory();
        throw error;
      }
    }
  }
  let current: ChildProcess = child;
  let stopped = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    directory,
    get running() {
      return !stopped && isAlive(current);
    },
    kill: (signal = 'SIGKILL') => signalAndWait(current, signal),
    freeze: () => void current.kill('SIGSTOP'),
    thaw: () => void current.kill('SIGCONT'),
    async restart() {
      if (stopped) throw new Error(`redis-server on port ${port} was stopped; start a new one`);
      await signalAndWait(current, 'SIGKILL');
      current = await launch(binary, port, directory, options);
    },
    async stop() {
      stopped = true;
      await signalAndWait(current, 'SIGKILL');
      await removeOwnDirectory();
    },
  };
}

async function launch(
  binary: string,
  port: number,
  directory: string,
  options: RedisServerOptions,
): Promise<ChildProcess> {
  const child = spawn(
    binary,
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', directory, '--save', ''],
      ...['--appendonly', options.appendOnly === true ? 'yes' : 'no', '--appendfsync', 'always'],
      ...['--maxmemory-policy', 'noeviction', '--logfile', ''],
      ...(options.password === undefined
        ? []
        : ['--requirepass', options.password, '--masterauth', options.password]),
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // The log's tail, for the error when it does not come up.
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let failure: Error | undefined;
  child.on('error', (error) => {
    failure ??= spawnFailure(binary, error);
  });
  child.once('exit', (code, signal) => {
    const how = signal === null ? `with code ${code}` : `on ${signal}`;
    failure ??= new Error(
      `redis-server on port ${port} exited ${how} before answering PING: ${output.trim()}`,
    );
  });
  const timeoutMs = options.startTimeoutMs ?? 10_000;
  try {
    const outcome = await waitFor(
      `redis-server on port ${port} to answer PING`,
      async () =>
        failure
          ? { failure }
          : (await isReady(port, child.pid, options.password)) && { failure: undefined },
      timeoutMs,
    );
    if (outcome.failure) throw outcome.failure;
  } catch (error) {
    await signalAndWait(child, 'SIGKILL');
    if (error === failure) throw error;
    throw new Error(`${String(error)}; its log: ${output.trim()}`, { cause: error });
  }
  return child;
}

function spawnFailure(binary: string, error: NodeJS.ErrnoException): Error {
  if (error.code === 'ENOENT') {
    return new Error(
      `redis-server binary not found ("${binary}"): install it with \`apt-get install redis-server\`, ` +
        'or set REDIS_SERVER_BIN to its path',
      { cause: error },
    );
  }
  return new Error(`could not start redis-server ("${binary}"): ${error.message}`, {
    cause: error,
  });
}

function isAddressInUse(error: unknown): boolean {
  return error instanceof Error && error.message.includes('Address already in use');
}

/**
 * PONG from this very process (not whoever else may hold the port) with its AOF loaded (PING
 * answers LOADING until then). A raw socket, so a port holder that is not Redis cannot hang it.
 */
async function isReady(
  port: number,
  processId: number | undefined,
  password: string | undefined,
): Promise<boolean> {
  const auth = password === undefined ? '' : `AUTH ${JSON.stringify(password)}\r\n`;
  const socket = connect({ host: '127.0.0.1', port });
  try {
    return await new Promise<boolean>((resolve) => {
      let reply = '';
      socket.setTimeout(1_000, () => resolve(false));
      socket.once('error', () => resolve(false));
      socket.once('close', () => resolve(false));
      socket.once('connect', () =>
        socket.write(`${auth}PING\r\nINFO server\r\nINFO persistence\r\n`),
      );
      socket.on('data', (chunk: Buffer) => {
        reply += chunk.toString();
        if (auth !== '' && reply.startsWith('+OK\r\n')) reply = reply.slice(5);
        if (!'+PONG\r\n'.startsWith(reply.slice(0, 7))) resolve(false);
        // The persistence section comes last; its loading line is all that is needed from it.
        if (/loading:\d\r\n/.test(reply)) {
          resolve(reply.includes(`process_id:${processId}\r\n`) && reply.includes('loading:0\r\n'));
        }
      });
    });
  } finally {
    socket.destroy();
  }
}

function isAlive(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

async function signalAndWait(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (!isAlive(child)) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}
