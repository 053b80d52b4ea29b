import path from 'node:path';
/**
 * `createDashboardServer`: the dashboard as an HTTP server on Hono + @hono/node-server.
 *
 * Bound to 127.0.0.1 by default. Binding anything else requires a token (`token` option or
 * `BATON_DASHBOARD_TOKEN`): the server refuses to start without one.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import { sourcePolicyFromEnvironment, type SourcePolicy } from '@baton/projects';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { DashboardControl } from './control.js';
import { DashboardError } from './errors.js';
import { createApp } from './internal/app.js';
import { defaultAssetsDirectory, loadAssets } from './internal/assets.js';
import {
  SESSION_MAX_AGE_SECONDS,
  createAuthPolicy,
  generateToken,
  MIN_TOKEN_LENGTH,
  tokenWeakness,
} from './internal/auth.js';
import { createLoginSessions, type SessionRedis } from './internal/login-sessions.js';
import { createLoginThrottle, type ThrottleRedis } from './internal/login-throttle.js';
import { createEventHub, type EventHub } from './internal/event-hub.js';
import { createDashboardLogger } from './internal/logger.js';
import { MAX_PAGE_BYTES } from './internal/page-bytes.js';
import { createDashboardTelemetry } from './internal/telemetry.js';

export const DEFAULT_DASHBOARD_HOST = '127.0.0.1';
export const DEFAULT_DASHBOARD_PORT = 8787;
/** Tokens shorter than this are refused: a short token on a network interface is guessable. */
export { MIN_TOKEN_LENGTH };

export interface DashboardServerOptions {
  /** The control API from `@baton/projects` (`createBatonControl(...)`); the dashboard never closes it. */
  control: DashboardControl;
  /** Interface to bind. Default `127.0.0.1`. Anything not loopback needs a token. */
  host?: string;
  /** Port; 0 picks a free one. Default 8787. */
  port?: number;
  /**
   * Shared secret for bearer auth and the login form. Default `process.env.BATON_DASHBOARD_TOKEN`.
   * A weak one (short, few distinct characters, a run like `abcdef...`) is refused at start.
   */
  token?: string;
  /**
   * Redis connection (ioredis, single node or Cluster) where login sessions and the failed-login
   * lockouts are kept (shared by every replica), under `control.keys.prefix`. Required when a
   * token is set; the dashboard never closes it.
   */
  redis?: (SessionRedis & ThrottleRedis) | undefined;
  /** BullMQ queue(s) shown by Bull Board at `/queues`. Default: none (the page says so). */
  queue?: Queue | readonly Queue[] | undefined;
  /**
   * What Bull Board may do: `read-only` (default; no job or queue can be changed, no Redis or
   * kernel details), `full` (retry, clean, empty, pause... and the Redis stats), `off` (no board).
   * Default `process.env.BATON_QUEUE_UI`, else `read-only`.
   */
  queueUi?: QueueUiMode | undefined;
  /** How often the one event reader re-lists the projects (events arrive in between). Default 500 ms. */
  pollIntervalMs?: number;
  /** SSE ping interval. Default 15 000 ms. */
  pingIntervalMs?: number;
  /** Folder holding the UI's static files. Default: the package's `public/`. */
  assetsDirectory?: string;
  /**
   * Set the login cookie's `Secure` flag (when a TLS proxy fronts the dashboard, so browsers only
   * send the cookie over https). Default `process.env.BATON_DASHBOARD_SECURE_COOKIE`
   * (`on|true|1` or `off|false|0`), else false.
   */
  secureCookie?: boolean | undefined;
  /**
   * pino logger for the access log (one `request` line per request at `info`) and errors. Default:
   * JSON lines on stderr at `LOG_LEVEL` (default `info`).
   */
  logger?: Logger;
  /** prom-client registry `/metrics` serves. Default: a new one. */
  registry?: Registry;
  /** Unexpected errors (a failed poll, a 500). Default: logged at `error` with stack and cause. */
  onError?: (error: unknown) => void;
  /** How long `/readyz` waits for Redis before answering 503. Default 2 000 ms. */
  readinessTimeoutMs?: number;
  /**
   * Where the branch diff view fetches a project's branch (`<home>/cache/<id>.git`). Default
   * `process.env.BATON_HOME`, else `.baton` in the current directory.
   */
  home?: string;
  /**
   * Which `repo` and `workspace` a project created here may name. Default: `BATON_REPO_HOSTS`,
   * `BATON_REPO_ROOTS` and `BATON_WORKSPACE_ROOT`, closed where unset (no remote host, no local
   * repository, workspaces only under `home`): the dashboard acts for network clients.
   */
  sourcePolicy?: SourcePolicy | undefined;
  /** Event streams open at once (past it: 503). Default 1 000. */
  maxStreams?: number | undefined;
  /** Event streams open at once from one client address (past it: 503). Default 20. */
  maxStreamsPerAddress?: number | undefined;
  /**
   * Heavy requests (branch diffs with their `git fetch`, searches, transcripts) running at once;
   * one more is answered 503 with `Retry-After: 1`. Default 8.
   */
  maxHeavyRequests?: number | undefined;
  /**
   * Projects one client address may create per minute, in a burst of as many; past it, 429 with
   * `Retry-After`. Default 30.
   */
  projectCreationsPerMinute?: number | undefined;
  /**
   * Connections open at once, of every kind (Node closes any past it at once). Default 2 000:
   * above the event-stream cap, so streams are refused with a 503 before sockets are dropped.
   */
  maxConnections?: number | undefined;
  /**
   * Most bytes of rows in one list answer (projects, sessions, events). A page that reaches it
   * stops early and carries the cursor that continues it (`nextCursor`, `before`,
   * `lastEventId`). Default 524 288 (512 KiB).
   */
  maxPageBytes?: number | undefined;
}

export interface DashboardServer {
  /** `http://host:port` of the running server. */
  url: string;
  host: string;
  port: number;
  /** The Hono app (for `app.request(...)` in tests). */
  app: Hono;
  /** Stops accepting connections, ends SSE streams and the event reader. Idempotent. */
  close(): Promise<void>;
}

/** True for addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const normalized = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return (
    normalized === 'localhost' ||
    normalized === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(normalized) ||
    normalized === '::ffff:127.0.0.1'
  );
}

/** What Bull Board may do (`BATON_QUEUE_UI`). */
export type QueueUiMode = 'read-only' | 'full' | 'off';
export const QUEUE_UI_MODES: readonly QueueUiMode[] = ['read-only', 'full', 'off'];

function parseQueueUi(value: string | undefined): QueueUiMode {
  const mode = value?.trim() || 'read-only';
  if ((QUEUE_UI_MODES as readonly string[]).includes(mode)) return mode as QueueUiMode;
  throw new DashboardError(
    'invalid_config',
    `BATON_QUEUE_UI must be one of ${QUEUE_UI_MODES.join(', ')}, not "${mode}"`,
  );
}

function parseSecureCookie(value: string | undefined): boolean {
  const setting = value?.trim().toLowerCase() || 'off';
  if (setting === 'on' || setting === 'true' || setting === '1') return true;
  if (setting === 'off' || setting === 'false' || setting === '0') return false;
  throw new DashboardError(
    'invalid_config',
    `BATON_DASHBOARD_SECURE_COOKIE must be on or off (true/false, 1/0), not "${setting}"`,
  );
}

function createQueueBoard(queues: readonly Queue[], mode: 'read-only' | 'full'): Hono {
  const serverAdapter = new HonoAdapter(serveStatic);
  const readOnly = mode === 'read-only';
  createBullBoard({
    // Read-only: Bull Board answers 405 to every job and queue action, and hides its buttons.
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: readOnly })),
    serverAdapter,
    // Redis and kernel versions, memory and uptime only for an operator who asked for `full`.
    options: { uiConfig: { boardTitle: 'Baton queues', hideRedisDetails: readOnly } },
  });
  serverAdapter.setBasePath('/queues');
  return serverAdapter.registerPlugin();
}

/** True if `check` settles successfully within `timeoutMs`. */
async function answersWithin(check: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([check().then(() => true as const), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** The variables the dashboard server reads (the `baton` typo guard's list takes them from here). */
export const DASHBOARD_ENV_VARIABLES = {
  /** Shared secret of bearer auth and the login form. */
  token: 'BATON_DASHBOARD_TOKEN',
  /** Where branches are fetched to for diffs. */
  home: 'BATON_HOME',
  /** What Bull Board may do: read-only (default), full or off. */
  queueUi: 'BATON_QUEUE_UI',
  /** The login cookie's `Secure` flag (behind a TLS proxy): on or off (default). */
  secureCookie: 'BATON_DASHBOARD_SECURE_COOKIE',
} as const;

export async function createDashboardServer(
  options: DashboardServerOptions,
): Promise<DashboardServer> {
  const host = options.host ?? DEFAULT_DASHBOARD_HOST;
  const port = options.port ?? DEFAULT_DASHBOARD_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new DashboardError(
      'invalid_config',
      `dashboard port ${String(port)} is not between 0 and 65535`,
    );
  }
  const rawToken = options.token ?? process.env[DASHBOARD_ENV_VARIABLES.token];
  const token = rawToken === undefined || rawToken.trim() === '' ? undefined : rawToken.trim();
  const loopback = isLoopbackHost(host);
  if (!loopback && token === undefined) {
    throw new DashboardError(
      'token_required',
      `refusing to bind the dashboard to ${host}: set BATON_DASHBOARD_TOKEN (at least ${MIN_TOKEN_LENGTH} characters) to expose it beyond this machine`,
    );
  }
  const weakness = token === undefined ? null : tokenWeakness(token);
  if (weakness !== null) {
    throw new DashboardError(
      'invalid_config',
      `BATON_DASHBOARD_TOKEN is too weak (${weakness}): use a random one such as ${generateToken()}`,
    );
  }
  if (token !== undefined && options.redis === undefined) {
    throw new DashboardError(
      'invalid_config',
      'a dashboard with a token needs a Redis connection (the `redis` option) for its login sessions',
    );
  }
  const queueUi = options.queueUi ?? parseQueueUi(process.env[DASHBOARD_ENV_VARIABLES.queueUi]);
  const secureCookie =
    options.secureCookie ?? parseSecureCookie(process.env[DASHBOARD_ENV_VARIABLES.secureCookie]);
  const logger = options.logger ?? createDashboardLogger({ level: process.env.LOG_LEVEL });
  const onError =
    options.onError ?? ((error: unknown) => logger.error({ err: error }, 'unexpected error'));
  const telemetry = createDashboardTelemetry({
    logger,
    registry: options.registry,
  });
  const readinessTimeoutMs = options.readinessTimeoutMs ?? 2_000;
  const assets = await loadAssets(options.assetsDirectory ?? defaultAssetsDirectory());
  const queues =
    options.queue === undefined
      ? []
      : Array.isArray(options.queue)
        ? options.queue
        : [options.queue as Queue];
  const home = path.resolve(
    options.home ?? (process.env[DASHBOARD_ENV_VARIABLES.home]?.trim() || '.baton'),
  );
  const hub: EventHub = createEventHub({
    control: options.control,
    pollIntervalMs: options.pollIntervalMs ?? 500,
    onError,
  });

  // Which Host headers mean "us" when no token protects the server (DNS-rebinding defence).
  const loopbackHosts = ['127.0.0.1', 'localhost', '[::1]'];
  if (!loopbackHosts.includes(host)) loopbackHosts.push(host.includes(':') ? `[${host}]` : host);

  const app = createApp({
    control: options.control,
    hub,
    sse: {
      control: options.control,
      hub,
      pingIntervalMs: options.pingIntervalMs ?? 15_000,
      maxQueuedMessages: 2_000,
      snapshotEvents: 200,
      onClient: telemetry.sseClient,
    },
    maxFileBytes: 1_048_576,
    streamLimits: {
      total: options.maxStreams ?? 1_000,
      perAddress: options.maxStreamsPerAddress ?? 20,
    },
    maxHeavyRequests: options.maxHeavyRequests ?? 8,
    maxPageBytes: options.maxPageBytes ?? MAX_PAGE_BYTES,
    projectCreationsPerMinute: options.projectCreationsPerMinute ?? 30,
    home,
    sourcePolicy:
      options.sourcePolicy ?? sourcePolicyFromEnvironment(process.env, { served: true, home }),
    auth: createAuthPolicy({
      token,
      loopbackHosts,
      sessions:
        options.redis === undefined
          ? undefined
          : createLoginSessions({
              redis: options.redis,
              prefix: options.control.keys.prefix,
              lifetimeMs: SESSION_MAX_AGE_SECONDS * 1000,
            }),
      throttle:
        options.redis === undefined
          ? undefined
          : createLoginThrottle({ redis: options.redis, prefix: options.control.keys.prefix }),
      logger,
    }),
    assets,
    queueBoard:
      queues.length > 0 && queueUi !== 'off' ? createQueueBoard(queues, queueUi) : undefined,
    queueUi,
    secureCookie,
    onError,
    telemetry,
    redisReady: () => answersWithin(() => options.control.queueCounts(), readinessTimeoutMs),
  });

  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve({ fetch: app.fetch, hostname: host, port }, () =>
      resolve(created as Server),
    ) as Server;
    created.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new DashboardError(
          'listen_failed',
          `cannot listen on ${host}:${port}: ${error.code ?? error.message}`,
          {
            cause: error,
          },
        ),
      );
    });
  }).catch(async (error: unknown) => {
    await hub.close();
    throw error;
  });

  // A slow client may not hold a socket for long before its request is in: 10 s for the headers,
  // 30 s for the whole request (an event stream's request is complete once its headers are).
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.maxConnections = options.maxConnections ?? 2_000;
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}`,
    host,
    port: address.port,
    app,
    close() {
      closing ??= (async () => {
        await hub.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // SSE responses never end on their own: cut them so close() returns.
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
