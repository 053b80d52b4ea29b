import Anthropic from '@anthropic-ai/sdk';
import { memoryStoreLimits } from '@baton/core';
import { type OtlpTracing, SessionError, runSession, startOtlpTracing } from '@baton/session';
import { createRedisMemoryStore, type MemoryFence } from '@baton/storage-redis';
import {
  type SandboxDecision,
  type SandboxProbe,
  decideSandbox,
  describeSandboxDecision,
  sessionSandboxSetup,
} from '@baton/workspace';
import type { Logger } from 'pino';
import {
  closeRedisConnection,
  createKeys,
  createModelRateLimiter,
  createRedisConnection,
  describeError,
  describeRedisTarget,
  isProjectError,
  memoryConnectionOptions,
  rateLimitedFetch,
  runRedisMigrations,
  sessionCommandTimeoutMs,
  waitForRedis,
  webhookTarget,
  workerConnectionOptions,
  type ConnectionTuning,
  type RedisClient,
} from '@baton/projects';
import { describeWorkerConfig, type WorkerConfig } from './config.js';
import { WorkerError } from './errors.js';
import { startWorkerHttpServer, type WorkerHttpServer } from './http-server.js';
import { createLogger } from './logger.js';
import { createRedisWatch } from './redis-watch.js';
import type { SessionRunner } from './session-runner.js';
import { createBatonWorker, type BatonWorker } from './worker.js';

/** How long closing queues and connections may take after the shutdown grace (ms). */
export const SHUTDOWN_CLOSE_MS = 3_000;

export interface StartWorkerOptions {
  /** Session runner; default `runSession` from `@baton/session`. */
  runSession?: SessionRunner;
  /** Logger; default pino JSON on stdout at `config.logLevel`. */
  logger?: Logger;
  /** How long to wait for Redis at start (ms). Default 5000. */
  connectTimeoutMs?: number;
  /** Probes the machine's sandbox. Default `probeSandbox` from `@baton/workspace`. */
  probeSandbox?: () => SandboxProbe;
  /** How often the running worker re-checks Redis's eviction policy and deployment marker (ms). Default 5000. */
  redisCheckEveryMs?: number | undefined;
}

export interface RunningWorker {
  worker: BatonWorker;
  logger: Logger;
  /** Bound port of `/metrics` and `/healthz`, or null when off. */
  httpPort: number | null;
  /** The simulator's URL when this process started its own. */
  simulatorUrl: string | null;
  /** Where this worker's sessions run their commands (never `refused`: then it does not start). */
  sandbox: Exclude<SandboxDecision, { kind: 'refused' }>;
  /** Graceful shutdown (see `BatonWorker.close`), then closes every connection it opened. */
  shutdown(graceMs?: number): Promise<{ drained: boolean }>;
}

/**
 * Builds a worker process from validated config: connections, Anthropic client with the shared
 * rate limit, memory stores, BullMQ worker, maintenance schedulers and the HTTP server. Throws
 * `WorkerError('redis_unreachable')` with one readable line if Redis does not answer.
 */
export async function startWorkerFromConfig(
  config: WorkerConfig,
  options: StartWorkerOptions = {},
): Promise<RunningWorker> {
  const logger =
    options.logger ?? createLogger({ level: config.logLevel, workerId: config.workerId });
  // Decided before anything connects: a worker that cannot sandbox takes no session at all.
  const sandbox = decideSandbox(config.sandbox, {
    simulator: config.simulator,
    probe: options.probeSandbox,
  });
  if (sandbox.kind === 'refused') throw new WorkerError('sandbox_unavailable', sandbox.message);
  const traces = await startTraces();
  if (traces !== undefined) logger.info({ otlp: traces.url }, 'traces: OTLP export on');
  if (sandbox.kind === 'unsandboxed') logger.warn({ sandbox: sandbox.reason }, sandbox.notice);
  const connections: RedisClient[] = [];
  const open = (settings: ConnectionTuning) => {
    // One node or a Cluster alike: every key the worker touches is built for both.
    const connection = createRedisConnection(config.redis, settings);
    connection.on('error', (error) => {
      logger.debug({ err: error }, 'redis connection error');
    });
    connections.push(connection);
    return connection;
  };
  const disconnectAll = () => {
    for (const connection of connections) closeRedisConnection(connection);
  };

  const commandConnection = open(workerConnectionOptions());
  try {
    await waitForRedis(commandConnection, options.connectTimeoutMs ?? 5000);
  } catch (error) {
    disconnectAll();
    throw new WorkerError(
      'redis_unreachable',
      `cannot reach Redis at ${describeRedisTarget(config.redis)}: ${describeError(error)}`,
      { cause: error },
    );
  }
  const keys = createKeys(config.prefix);
  // Before any job is taken: an evicting Redis is refused, a wiped one is reported.
  const redisWatch = createRedisWatch({
    redis: commandConnection,
    keys,
    allowEviction: config.allowEviction,
    home: config.home,
    logger,
    everyMs: options.redisCheckEveryMs,
    onLost: () => {
      // Nothing more is taken here, and sessions stop before their next write to the empty
      // Redis makes a fragment of a project it no longer knows.
      void worker.worker.pause(true);
      for (const session of worker.running.values()) session.abort('lease_lost');
    },
  });
  try {
    await redisWatch.start();
  } catch (error) {
    disconnectAll();
    throw error;
  }
  // Before any job is taken: data an earlier version stored is upgraded once (one runner at a
  // time), and data a newer version migrated is refused.
  try {
    const migrated = await runRedisMigrations({
      redis: commandConnection,
      keys,
      report: (notice) =>
        logger.warn({ migration: notice.migration, projects: notice.projects }, notice.message),
    });
    if (migrated.length > 0) logger.info({ migrations: migrated }, 'Redis data migrated');
  } catch (error) {
    redisWatch.stop();
    disconnectAll();
    if (isProjectError(error) && error.code === 'newer_data')
      throw new WorkerError('newer_data', error.message, { cause: error });
    throw error;
  }
  const workerConnection = open(workerConnectionOptions());
  const subscriberConnection = open(workerConnectionOptions());
  // A session's calls (lease, record, events, transcript, memory, the model rate limit) fail after
  // the lease TTL minus one renewal instead of waiting on a frozen link: by then the lease
  // watchdog has stopped the session.
  const commandTimeout = sessionCommandTimeoutMs(config.leaseTtlMs);
  const sessionConnection = open({ ...workerConnectionOptions(), commandTimeout });
  const memoryConnection = open({ ...memoryConnectionOptions(), commandTimeout });

  let simulator: { url: string; close(): Promise<void> } | null = null;
  let baseUrl = config.baseUrl;
  if (config.simulator && baseUrl === undefined) {
    // No API and no external simulator: run the built-in one in this process.
    const { startModelSim } = await import('@baton/model-sim');
    simulator = await startModelSim({ port: 0 });
    baseUrl = simulator.url;
    logger.warn(
      { simulatorUrl: simulator.url },
      'no ANTHROPIC_BASE_URL: using the built-in model simulator',
    );
  } else if (config.simulator) {
    logger.warn({ baseUrl }, 'using the model simulator at ANTHROPIC_BASE_URL');
  }

  // Every model request of a session takes a token first: a session call like the others.
  const limiter = createModelRateLimiter({
    redis: sessionConnection,
    key: keys.modelRateLimit,
    requestsPerSecond: config.modelRequestsPerSecond,
  });
  const client = new Anthropic({
    apiKey: config.apiKey,
    baseURL: baseUrl,
    // The session retries 429/529/5xx itself with backoff and reports each retry as an event.
    maxRetries: 0,
    fetch: rateLimitedFetch(limiter),
  });

  // Reads record access times at most once per granularity: keep it well below the sweep's idle time.
  const accessTimeGranularityMs =
    config.memoryIdleTtlMs > 0
      ? Math.min(60_000, Math.floor(config.memoryIdleTtlMs / 10))
      : undefined;
  const memoryStore = (projectId: string, fence?: MemoryFence) =>
    createRedisMemoryStore({
      redis: memoryConnection,
      namespace: projectId,
      // Derived from BATON_PREFIX, as the control API's: a deployment's memory is its own.
      prefix: keys.memoryPrefix,
      limits: memoryStoreLimits(),
      fence,
      accessTimeGranularityMs,
    });
  const sessionMemory = async (projectId: string, fence?: MemoryFence) => {
    const store = memoryStore(projectId, fence);
    await store.claimFence();
    return store;
  };

  const worker = createBatonWorker({
    workerConnection,
    commandConnection,
    subscriberConnection,
    sessionConnection,
    prefix: config.prefix,
    concurrency: config.concurrency,
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
    maxStalledCount: config.maxStalledCount,
    leaseTtlMs: config.leaseTtlMs,
    closeTimeoutMs: SHUTDOWN_CLOSE_MS,
    chainDelayMs: config.chainDelayMs,
    retryDelayMs: config.retryDelayMs,
    maxConsecutiveFailures: config.maxConsecutiveFailures,
    home: config.home,
    checkpointIntervalMs: config.checkpointIntervalMs,
    maxFileBytes: config.maxFileBytes,
    memorySnapshots: config.memorySnapshots,
    runSession: options.runSession ?? runSession,
    client,
    memoryStore: sessionMemory,
    sessionOptions: (project) => ({
      retry: { maxRetries: config.apiMaxRetries, baseDelayMs: config.apiRetryBaseMs },
      tools: { sandbox: sessionSandboxSetup(sandbox, project.sandbox) },
      mcp: { worker: config.mcp },
    }),
    defaultModel: config.model,
    defaultFallbackModel: config.fallbackModel,
    observeEvent: traces === undefined ? undefined : (event) => traces.tracing.record(event),
    workerId: config.workerId,
    logger,
    webhooks: {
      urls: config.webhookUrls,
      secret: config.webhookSecret,
      attempts: config.webhookAttempts,
      backoffMs: config.webhookBackoffMs,
    },
    maintenance: {
      memorySweepEveryMs: config.memoryIdleTtlMs > 0 ? config.memorySweepEveryMs : 0,
      sweepMemory: async () => {
        const ids = await commandConnection.zrange(keys.projects, '0', '-1');
        let removed = 0;
        for (const id of ids) {
          const result = await memoryStore(id).sweepExpired({
            olderThanMs: config.memoryIdleTtlMs,
          });
          removed += result.removed.length;
        }
        return { removed };
      },
      jobRetentionMs: config.jobRetentionMs,
    },
  });

  let http: WorkerHttpServer | null = null;
  try {
    await worker.ready();
    if (config.httpPort >= 0) {
      http = await startWorkerHttpServer({
        registry: worker.metrics.registry,
        healthy: () => worker.healthy() && redisWatch.problem() === undefined,
        notReadyReason: redisWatch.problem,
        port: config.httpPort,
        host: config.httpHost,
      });
    }
  } catch (error) {
    redisWatch.stop();
    await worker.close(0).catch(() => undefined);
    await simulator?.close();
    disconnectAll();
    throw error;
  }
  logger.info(
    {
      redis: describeRedisTarget(config.redis),
      prefix: config.prefix,
      concurrency: config.concurrency,
      httpPort: http?.port ?? null,
      lockDurationMs: config.lockDurationMs,
      stalledIntervalMs: config.stalledIntervalMs,
      sandbox: describeSandboxDecision(sandbox),
      webhooks: config.webhookUrls.map((url) => webhookTarget(url)),
      settings: describeWorkerConfig(config),
    },
    'worker started',
  );

  let shuttingDown: Promise<{ drained: boolean }> | undefined;
  return {
    worker,
    logger,
    httpPort: http?.port ?? null,
    simulatorUrl: simulator?.url ?? null,
    sandbox,
    shutdown(graceMs = config.shutdownGraceMs) {
      shuttingDown ??= (async () => {
        redisWatch.stop();
        const result = await worker.close(graceMs);
        await http?.close();
        await simulator?.close();
        disconnectAll();
        // Batched spans of the last sessions leave before the process does.
        await traces?.shutdown().catch(() => undefined);
        return result;
      })();
      return shuttingDown;
    },
  };
}

/** OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set; a bad endpoint is bad config. */
async function startTraces(): Promise<OtlpTracing | undefined> {
  try {
    return await startOtlpTracing({ serviceName: 'baton-worker' });
  } catch (error) {
    if (error instanceof SessionError) throw new WorkerError('invalid_config', error.message);
    throw error;
  }
}
