import { Cluster, Redis } from 'ioredis';

/** Any ioredis client Baton accepts: one node or a Cluster. */
export type RedisClient = Redis | Cluster;

/** One seed node of a Redis Cluster. */
export interface RedisClusterNode {
  host: string;
  port: number;
}

/**
 * Where Baton's Redis is: one node (`REDIS_URL`) or a Cluster (`REDIS_CLUSTER_NODES`). Read once
 * from the environment by `readRedisTarget`; every process (worker, CLI, dashboard, `baton up`)
 * opens its connections from it with `createRedisConnection`.
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | {
      kind: 'cluster';
      /** Seed nodes; the client learns the rest of the cluster from them. */
      nodes: RedisClusterNode[];
      /** TLS to every node (`rediss://` seeds). */
      tls: boolean;
      /** ACL user from the seeds' URLs, if any. */
      username?: string | undefined;
      /** Password from the seeds' URLs, if any. */
      password?: string | undefined;
    };

/** Default when neither `REDIS_CLUSTER_NODES` nor `REDIS_URL` is set. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** A Redis setting that cannot be used; `variable` names the environment variable. */
export class RedisTargetError extends Error {
  readonly code = 'invalid_config';
  readonly variable: string;

  constructor(variable: string, message: string) {
    super(message);
    this.name = 'RedisTargetError';
    this.variable = variable;
  }
}

/**
 * `REDIS_CLUSTER_NODES` (comma-separated `host:port`, or `redis://[user:password@]host:port` /
 * `rediss://...` for auth and TLS) when set, taking precedence over `REDIS_URL`; else `REDIS_URL`;
 * else `defaultUrl`. Throws `RedisTargetError` naming the variable and the bad value.
 */
export function readRedisTarget(
  env: NodeJS.ProcessEnv = process.env,
  options: { defaultUrl?: string } = {},
): RedisTarget {
  const nodes = env.REDIS_CLUSTER_NODES?.trim();
  if (nodes !== undefined && nodes !== '') return parseClusterNodes(nodes);
  const url = env.REDIS_URL?.trim();
  return parseRedisUrl(
    url === undefined || url === '' ? (options.defaultUrl ?? DEFAULT_REDIS_URL) : url,
  );
}

/** A `redis://` or `rediss://` URL with a host, or `RedisTargetError('REDIS_URL')`. */
export function parseRedisUrl(url: string, variable = 'REDIS_URL'): RedisTarget {
  const parsed = parseUrl(url, variable);
  if (parsed.hostname === '') {
    throw new RedisTargetError(variable, `${variable} has no host: "${redactUrl(url)}"`);
  }
  return { kind: 'single', url };
}

/**
 * Parses `REDIS_CLUSTER_NODES`. Entries are `host:port` or `redis[s]://[user:password@]host:port`;
 * bare entries take the scheme and credentials of the URL entries, which must agree among
 * themselves (one cluster is all TLS or none, with one ACL user).
 */
export function parseClusterNodes(value: string): RedisTarget {
  const variable = 'REDIS_CLUSTER_NODES';
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) {
    throw new RedisTargetError(variable, `${variable} lists no nodes`);
  }
  const nodes: RedisClusterNode[] = [];
  const schemes = new Set<boolean>();
  const credentials = new Set<string>();
  let username: string | undefined;
  let password: string | undefined;
  for (const entry of entries) {
    const isUrl = entry.includes('://');
    const url = isUrl ? entry : `redis://${entry}`;
    const parsed = URL.canParse(url) ? parseUrl(url, variable) : undefined;
    const port = Number(parsed?.port || '6379');
    // Said as given, with any password masked (the mask needs a scheme to find it).
    const shown = isUrl ? redactUrl(entry) : redactUrl(url).replace(/^redis:\/\//u, '');
    if (
      parsed === undefined ||
      parsed.hostname === '' ||
      !Number.isInteger(port) ||
      port < 1 ||
      port > 65_535 ||
      (!isUrl && (parsed.username !== '' || parsed.password !== ''))
    ) {
      throw new RedisTargetError(
        variable,
        `${variable} entries must be host:port or redis[s]://[user:password@]host:port, got "${shown}"`,
      );
    }
    if (parsed.pathname !== '' && parsed.pathname !== '/' && parsed.pathname !== '/0') {
      throw new RedisTargetError(
        variable,
        `${variable} entries cannot select a database (a Cluster has only database 0), got "${shown}"`,
      );
    }
    // URL keeps IPv6 hosts in brackets; ioredis wants them bare.
    nodes.push({ host: parsed.hostname.replace(/^\[(.*)\]$/u, '$1'), port });
    if (!isUrl) continue;
    schemes.add(parsed.protocol === 'rediss:');
    if (parsed.username !== '' || parsed.password !== '') {
      username = parsed.username === '' ? undefined : decodeURIComponent(parsed.username);
      password = parsed.password === '' ? undefined : decodeURIComponent(parsed.password);
      credentials.add(`${parsed.username}:${parsed.password}`);
    }
  }
  if (schemes.size > 1) {
    throw new RedisTargetError(
      variable,
      `${variable} mixes redis:// and rediss:// nodes: a cluster is all TLS or none`,
    );
  }
  if (credentials.size > 1) {
    throw new RedisTargetError(
      variable,
      `${variable} gives different credentials for different nodes: give them once`,
    );
  }
  return {
    kind: 'cluster',
    nodes,
    tls: schemes.has(true),
    username,
    password,
  };
}

function parseUrl(url: string, variable: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisTargetError(variable, `${variable} is not a URL: "${redactUrl(url)}"`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RedisTargetError(
      variable,
      `${variable} must start with redis:// or rediss://, got "${redactUrl(url)}"`,
    );
  }
  return parsed;
}

/** The URL with any password replaced, for logs and error messages; otherwise as given. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    // Unparseable: still never print what may be a password after "user:".
    return url.replace(/\/\/([^:/@]*):[^@]*@/u, '//$1:***@');
  }
}

/** One line naming the target without secrets, e.g. `redis://127.0.0.1:6379/` or `cluster 10.0.0.1:7000,...`. */
export function describeRedisTarget(target: RedisTarget): string {
  if (target.kind === 'single') return redactUrl(target.url);
  const scheme = target.tls ? 'rediss' : 'redis';
  return `${scheme} cluster ${target.nodes.map((node) => `${node.host}:${node.port}`).join(',')}`;
}

/** One line naming where a client connects, without secrets (for a client made elsewhere). */
export function describeRedisClient(client: RedisClient): string {
  if (isCluster(client)) return 'the Redis cluster';
  const { host, port, db } = client.options;
  return `redis://${host ?? '127.0.0.1'}:${port ?? 6379}/${db ?? 0}`;
}

/** The environment variables that name `target`, for a child process (`baton up`'s worker). */
export function redisTargetEnvironment(target: RedisTarget): Record<string, string> {
  if (target.kind === 'single') return { REDIS_URL: target.url };
  const scheme = target.tls ? 'rediss' : 'redis';
  const auth =
    target.username !== undefined || target.password !== undefined
      ? `${encodeURIComponent(target.username ?? '')}:${encodeURIComponent(target.password ?? '')}@`
      : '';
  return {
    REDIS_CLUSTER_NODES: target.nodes
      .map((node) => `${scheme}://${auth}${formatHost(node.host)}:${node.port}`)
      .join(','),
  };
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** The per-connection settings that differ between producers, workers and memory stores. */
export interface ConnectionTuning {
  /** `null` for BullMQ workers and blocking readers (BullMQ refuses anything else). */
  maxRetriesPerRequest: number | null;
  /** Queue commands while disconnected (ioredis default true). */
  enableOfflineQueue?: boolean;
  /** Give up connecting after this long (ms). */
  connectTimeout?: number;
  /** Resend commands in flight when a connection drops (ioredis default true). */
  autoResendUnfulfilledCommands?: boolean;
  /** Do not connect until the first command or `connect()`. Default false. */
  lazyConnect?: boolean;
  /** Reconnect policy; `() => null` never reconnects (probes). Default: ioredis's. */
  retryStrategy?: (times: number) => number | null;
  /**
   * Reject a command that has no reply after this long (ms), also one queued while disconnected.
   * Only for connections that send no blocking command (a blocked read would time out too).
   * Default: none (ioredis waits for the reply as long as the connection is up).
   */
  commandTimeout?: number;
}

/** Producers fail fast instead of queueing commands while Redis is away. */
export function producerConnectionOptions(): ConnectionTuning {
  return { maxRetriesPerRequest: 1, enableOfflineQueue: false };
}

/** Worker and QueueEvents connections must retry forever (BullMQ refuses anything else). */
export function workerConnectionOptions(): ConnectionTuning {
  return { maxRetriesPerRequest: null };
}

/**
 * Memory-store connections never resend a script that was in flight when the connection dropped:
 * it could apply a mutation twice. A store's own connection (`DEFAULT_CONNECTION_OPTIONS`) has
 * the same settings.
 */
export function memoryConnectionOptions(): ConnectionTuning {
  return { maxRetriesPerRequest: 1, autoResendUnfulfilledCommands: false, connectTimeout: 5_000 };
}

/**
 * Opens one connection to `target` with `tuning`: an ioredis `Redis` for one node, an ioredis
 * `Cluster` for a cluster (the tuning then applies to every node connection, and the cluster's
 * offline queue follows `enableOfflineQueue`). Never sets `keyPrefix`: prefixes are BullMQ's and
 * the key builders' business.
 */
export function createRedisConnection(target: RedisTarget, tuning: ConnectionTuning): RedisClient {
  // ioredis merges constructor options with lodash-style `defaults()`: an undefined option is absent.
  if (target.kind === 'single') return new Redis(target.url, tuning);
  const { retryStrategy, lazyConnect, ...nodeTuning } = tuning;
  return new Cluster(
    target.nodes.map((node) => ({ ...node })),
    {
      ...(tuning.maxRetriesPerRequest === null ? FAILOVER_RIDE_THROUGH : {}),
      redisOptions: {
        ...nodeTuning,
        username: target.username,
        password: target.password,
        ...(target.tls ? { tls: {} } : {}),
      },
      enableOfflineQueue: tuning.enableOfflineQueue,
      lazyConnect,
      clusterRetryStrategy: retryStrategy,
      // TLS certificates name the host the client dialled, not the IP a node announces.
      ...(target.tls
        ? {
            dnsLookup: (address: string, callback: (error: null, address: string) => void) =>
              callback(null, address),
          }
        : {}),
    },
  );
}

/**
 * How long a Cluster command keeps being retried while its master is unreachable and the slot
 * map is stale (a failover: the replica takes over after `cluster-node-timeout`, 15 s by default).
 * ioredis retries every `retryDelayOnFailover`/`retryDelayOnClusterDown` ms but gives up after
 * `maxRedirections` tries (16 x 100 ms by default, far shorter than a failover); connections that
 * must wait through outages (`maxRetriesPerRequest: null`) get about a minute instead. Each retry
 * also refreshes the slot map, which is how the promoted replica is found.
 */
const FAILOVER_RIDE_THROUGH = {
  retryDelayOnFailover: 250,
  retryDelayOnClusterDown: 250,
  retryDelayOnTryAgain: 250,
  maxRedirections: 480,
} as const;

/** True if `client` is an ioredis Cluster. */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** Resolves once `client` is ready, or rejects after `timeoutMs` with the last connection error. */
export async function waitForRedis(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    let lastError: unknown;
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(lastError ? describe(lastError) : `no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const onError = (error: unknown) => {
      lastError = error;
    };
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
    };
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/** True if `target` answers PING within `timeoutMs` (one probe connection, closed afterwards). */
export async function answersPing(target: RedisTarget, timeoutMs: number): Promise<boolean> {
  const client = createRedisConnection(target, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  const timer = setTimeout(() => client.disconnect(), timeoutMs);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    closeRedisConnection(client);
  }
}

/**
 * Closes `client` at once and leaves no timer behind. A ready connection is ended as ioredis
 * does it (`disconnect()`: FIN, then wait up to `disconnectTimeout` for the socket to close). A
 * connection that never became ready is destroyed: ioredis would otherwise wait 2 s for a
 * `close` its socket emitted already (a refused connect), keeping the process alive that long.
 * For a Cluster this holds per node connection.
 */
export function closeRedisConnection(client: RedisClient): void {
  const nodes = isCluster(client) ? client.nodes('all') : [client];
  const unready = nodes.filter((node) => node.status !== 'ready').map((node) => node.stream);
  client.disconnect();
  for (const stream of unready) {
    // `stream` is undefined until the first connect (lazyConnect); then nothing waits.
    if (stream === undefined) continue;
    // An already closed socket never closes again: say so to the waiter, which clears its timer.
    if (stream.closed) stream.emit('close');
    else stream.destroy();
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return code && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}

/**
 * A new connection to the same Redis as `client` with different tuning (blocking readers need
 * their own: a blocked connection serves nobody else). For a Cluster the tuning applies to every
 * node connection.
 */
export function duplicateConnection(client: RedisClient, tuning: ConnectionTuning): RedisClient {
  const { retryStrategy, lazyConnect, ...nodeTuning } = tuning;
  if (isCluster(client)) {
    return client.duplicate(undefined, {
      redisOptions: {
        ...(client.options.redisOptions as Record<string, unknown>),
        ...nodeTuning,
      },
      // eslint-disable-next-line no-restricted-syntax -- duplicate() merges with Object.assign: undefined would replace the parent's value
      ...(tuning.enableOfflineQueue === undefined
        ? {}
        : { enableOfflineQueue: tuning.enableOfflineQueue }),
      // eslint-disable-next-line no-restricted-syntax -- duplicate() merges with Object.assign: undefined would replace the parent's value
      ...(lazyConnect === undefined ? {} : { lazyConnect }),
      // eslint-disable-next-line no-restricted-syntax -- duplicate() merges with Object.assign: undefined would replace the parent's value
      ...(retryStrategy === undefined ? {} : { clusterRetryStrategy: retryStrategy }),
    });
  }
  return client.duplicate({
    ...nodeTuning,
    // eslint-disable-next-line no-restricted-syntax -- duplicate() spreads over the parent's options: undefined would replace its value
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    // eslint-disable-next-line no-restricted-syntax -- duplicate() spreads over the parent's options: undefined would replace its value
    ...(retryStrategy === undefined ? {} : { retryStrategy }),
  });
}
