import os from 'node:os';
import path from 'node:path';
import {
  DEFAULT_MAX_FILE_BYTES,
  type SandboxSetting,
  WorkspaceError,
  parseSandboxSetting,
} from '@baton/workspace';
import { contextVariablesSet, isSimulatedModel } from '@baton/context-config';
import { z } from 'zod';
import { MCP_CONFIG_ENV_VARIABLE, type McpConfig, loadMcpConfigFile } from '@baton/session';
import { WorkerError } from './errors.js';
import {
  CHAIN_POLICIES,
  DEFAULT_PREFIX,
  MODEL_ID_PATTERN,
  MODEL_ID_RULE,
  RedisTargetError,
  describeError,
  prefixProblem,
  readRedisTarget,
  webhookSigningKey,
  type RedisTarget,
} from '@baton/projects';

/** Everything a worker process needs, read from the environment and validated at start. */
export interface WorkerConfig {
  /**
   * Where Redis is: `REDIS_CLUSTER_NODES` (a Cluster; takes precedence) or `REDIS_URL` (one node),
   * default `redis://127.0.0.1:6379`.
   */
  redis: RedisTarget;
  /** `BATON_PREFIX`: key prefix with a `{hash tag}`, default `{baton}`. */
  prefix: string;
  /** `ANTHROPIC_API_KEY` (a placeholder when the simulator is used). */
  apiKey: string;
  /** `ANTHROPIC_BASE_URL`: API (or simulator) address; undefined = the SDK default. */
  baseUrl: string | undefined;
  /** True when `BATON_MODEL=sim` or `BATON_SIMULATOR=1`: no key needed. */
  simulator: boolean;
  /** `BATON_MODEL`: default model for projects that do not name one. */
  model: string;
  /**
   * `BATON_FALLBACK_MODEL`: model a session continues on when its model stays overloaded after
   * the retries, for projects that do not name one. Default: none.
   */
  fallbackModel: string | undefined;
  /** `BATON_CONCURRENCY`: sessions run at once by this process. Default 4. */
  concurrency: number;
  /** `BATON_HTTP_PORT`: `/metrics` and `/healthz`; 0 = any free port, -1 = off. Default 9464. */
  httpPort: number;
  /** `BATON_HTTP_HOST`: default 127.0.0.1. */
  httpHost: string;
  /** `BATON_LOCK_DURATION_MS`: BullMQ job lock. Default 6000. */
  lockDurationMs: number;
  /** `BATON_STALLED_INTERVAL_MS`: BullMQ stall check period (same on every worker). Default 3000. */
  stalledIntervalMs: number;
  /** `BATON_MAX_STALLED_COUNT`: crashes a job survives. Default 100. */
  maxStalledCount: number;
  /** `BATON_LEASE_TTL_MS`: per-project lease lifetime without renewal. Default 8000. */
  leaseTtlMs: number;
  /** `BATON_SHUTDOWN_GRACE_MS`: time running sessions get to finish on SIGTERM. Default 30000. */
  shutdownGraceMs: number;
  /**
   * `BATON_ALLOW_EVICTION=1`: start (with a warning) on a Redis whose `maxmemory-policy` is not
   * `noeviction`. Default false: such a worker refuses to start.
   */
  allowEviction: boolean;
  /** `BATON_CHAIN_DELAY_MS`: delay before the next session of a project. Default 1000. */
  chainDelayMs: number;
  /** `BATON_RETRY_DELAY_MS`: delay before retrying after a failed session. Default 5000. */
  retryDelayMs: number;
  /** `BATON_MAX_FAILURES`: failed sessions in a row before the project is `failed`. Default 3. */
  maxConsecutiveFailures: number;
  /** `BATON_MODEL_RPS`: model requests per second across all workers; 0 = unlimited. Default 50. */
  modelRequestsPerSecond: number;
  /**
   * `BATON_HOME`: default `.baton`. The worker keeps its own clone of each project under it
   * (`workspaces/<id>`, `git/<id>.git`); nothing in it is shared with other workers.
   */
  home: string;
  /** `BATON_CHECKPOINT_INTERVAL_MS`: least time between two mid-session checkpoints. Default 5000. */
  checkpointIntervalMs: number;
  /** `BATON_MAX_FILE_BYTES`: files larger are left out of checkpoints. Default 52428800 (50 MiB). */
  maxFileBytes: number;
  /**
   * `BATON_MEMORY_SNAPSHOTS`: `on` (default: after each pushed checkpoint the project's memory
   * goes to `refs/baton/memory/<id>` of its repository, for `baton adopt`) or `off`.
   */
  memorySnapshots: boolean;
  /** `BATON_MEMORY_SWEEP_MS`: memory expiry sweep period; 0 = off. Default 3600000. */
  memorySweepEveryMs: number;
  /** `BATON_MEMORY_IDLE_TTL_MS`: memory files idle this long are swept; 0 = never. Default 0. */
  memoryIdleTtlMs: number;
  /** `BATON_JOB_RETENTION_MS`: finished jobs older than this are removed. Default 7 days. */
  jobRetentionMs: number;
  /** `BATON_API_MAX_RETRIES`: retries of a failed model request (429/529/5xx/network). Default 6. */
  apiMaxRetries: number;
  /** `BATON_API_RETRY_BASE_MS`: first retry delay, doubled each time. Default 1000. */
  apiRetryBaseMs: number;
  /** `LOG_LEVEL`: pino level, default `info`. */
  logLevel: string;
  /** `BATON_WORKER_ID`: default `<hostname>:<pid>`. */
  workerId: string;
  /**
   * `BATON_SANDBOX`: `on` (default: every command in the OS sandbox, default policy), `off` (the
   * operator's explicit opt-out) or a JSON sandbox policy (`@baton/workspace`'s schema).
   */
  sandbox: SandboxSetting;
  /**
   * `BATON_MCP_CONFIG`: a `.mcp.json`-format file of MCP servers every project's sessions get
   * (a project's own servers of the same name win). Default none.
   */
  mcp?: McpConfig | undefined;
  /** `BATON_WEBHOOK_URL`: receivers of project notifications (comma- or space-separated). */
  webhookUrls: string[];
  /** `BATON_WEBHOOK_SECRET`: the signing secret (`whsec_...` or plain); required with `BATON_WEBHOOK_URL`. */
  webhookSecret: string;
  /** `BATON_WEBHOOK_ATTEMPTS`: attempts per delivery. Default 6. */
  webhookAttempts: number;
  /** `BATON_WEBHOOK_BACKOFF_MS`: first retry delay of a delivery, doubled each time. Default 5000. */
  webhookBackoffMs: number;
}

const integer = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value.trim() === '') return fallback;
      const parsed = Number(value);
      if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
        context.addIssue({
          code: 'custom',
          message: `${name} must be an integer from ${min} to ${max}, got "${value}"`,
        });
        return z.NEVER;
      }
      return parsed;
    });

const envSchema = z.object({
  BATON_PREFIX: z
    .string()
    .optional()
    .transform((value, context) => {
      const prefix = value && value !== '' ? value : DEFAULT_PREFIX;
      const problem = prefixProblem(prefix, 'BATON_PREFIX');
      if (problem !== null) {
        context.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      return prefix;
    }),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: z
    .string()
    .optional()
    .refine(
      (value) => value === undefined || value === '' || URL.canParse(value),
      'ANTHROPIC_BASE_URL is not a URL',
    ),
  BATON_MODEL: z.string().optional(),
  BATON_FALLBACK_MODEL: z
    .string()
    .optional()
    .transform((value) => value?.trim() || undefined)
    .refine(
      (value) => value === undefined || MODEL_ID_PATTERN.test(value),
      `BATON_FALLBACK_MODEL ${MODEL_ID_RULE}`,
    ),
  BATON_SIMULATOR: z.string().optional(),
  BATON_ALLOW_EVICTION: z
    .string()
    .optional()
    .refine(
      (value) => value === undefined || /^(|0|1|true|false|yes|no)$/iu.test(value),
      'BATON_ALLOW_EVICTION must be 1 or 0',
    ),
  BATON_CONCURRENCY: integer('BATON_CONCURRENCY', 4, 1, 1000),
  BATON_HTTP_PORT: integer('BATON_HTTP_PORT', 9464, -1, 65535),
  BATON_HTTP_HOST: z.string().optional(),
  BATON_LOCK_DURATION_MS: integer('BATON_LOCK_DURATION_MS', 6000, 1000),
  BATON_STALLED_INTERVAL_MS: integer('BATON_STALLED_INTERVAL_MS', 3000, 500),
  BATON_MAX_STALLED_COUNT: integer('BATON_MAX_STALLED_COUNT', 100, 1),
  BATON_LEASE_TTL_MS: integer('BATON_LEASE_TTL_MS', 8000, 2000),
  BATON_SHUTDOWN_GRACE_MS: integer('BATON_SHUTDOWN_GRACE_MS', 30_000, 0),
  BATON_CHAIN_DELAY_MS: integer('BATON_CHAIN_DELAY_MS', CHAIN_POLICIES.worker.chainDelayMs, 0),
  BATON_RETRY_DELAY_MS: integer('BATON_RETRY_DELAY_MS', CHAIN_POLICIES.worker.retryDelayMs, 0),
  BATON_MAX_FAILURES: integer(
    'BATON_MAX_FAILURES',
    CHAIN_POLICIES.worker.maxConsecutiveFailures,
    1,
    1000,
  ),
  BATON_MODEL_RPS: integer('BATON_MODEL_RPS', 50, 0),
  BATON_HOME: z.string().optional(),
  BATON_CHECKPOINT_INTERVAL_MS: integer('BATON_CHECKPOINT_INTERVAL_MS', 5000, 0),
  BATON_MAX_FILE_BYTES: integer('BATON_MAX_FILE_BYTES', DEFAULT_MAX_FILE_BYTES, 1),
  BATON_MEMORY_SNAPSHOTS: z
    .enum(['', 'on', 'off'], { error: 'BATON_MEMORY_SNAPSHOTS must be on or off' })
    .optional(),
  BATON_MEMORY_SWEEP_MS: integer('BATON_MEMORY_SWEEP_MS', 3_600_000, 0),
  BATON_MEMORY_IDLE_TTL_MS: integer('BATON_MEMORY_IDLE_TTL_MS', 0, 0),
  BATON_JOB_RETENTION_MS: integer('BATON_JOB_RETENTION_MS', 7 * 24 * 3_600_000, 1000),
  BATON_API_MAX_RETRIES: integer('BATON_API_MAX_RETRIES', 6, 0, 100),
  BATON_API_RETRY_BASE_MS: integer('BATON_API_RETRY_BASE_MS', 1000, 0),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .optional(),
  BATON_WORKER_ID: z.string().optional(),
  BATON_WEBHOOK_URL: z
    .string()
    .optional()
    .transform((value, context) => {
      const urls = (value ?? '').split(/[\s,]+/u).filter((entry) => entry !== '');
      urls.forEach((url, index) => {
        // The value is not echoed: webhook URLs often carry a token in their path.
        if (!URL.canParse(url) || !/^https?:$/u.test(new URL(url).protocol)) {
          context.addIssue({
            code: 'custom',
            message: `BATON_WEBHOOK_URL entry ${index + 1} is not an http:// or https:// URL`,
          });
        }
      });
      return urls;
    }),
  BATON_WEBHOOK_SECRET: z.string().optional(),
  BATON_WEBHOOK_ATTEMPTS: integer('BATON_WEBHOOK_ATTEMPTS', 6, 1, 100),
  BATON_WEBHOOK_BACKOFF_MS: integer('BATON_WEBHOOK_BACKOFF_MS', 5000, 0),
  // Checked by `parseSandboxSetting` below; listed so the typo guard knows the name.
  BATON_SANDBOX: z.string().optional(),
  // Read and checked by `loadMcpConfigFile` below.
  [MCP_CONFIG_ENV_VARIABLE]: z.string().optional(),
});

/**
 * Every variable the worker reads, from the schema that reads them (the `baton` typo guard
 * builds its list of known `BATON_*` names from this and the other packages' lists).
 */
export const WORKER_ENV_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/**
 * A worker runs every project with the context config stored when the project was created
 * (`baton enqueue`, the dashboard), so the same project behaves the same on every machine. Its
 * own `BATON_CONTEXT_*` therefore change nothing; this one line says so instead of ignoring them
 * silently. `undefined` when none is set.
 */
export function contextVariablesNotice(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const names = contextVariablesSet(env);
  if (names.length === 0) return undefined;
  return `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} not applied by workers: each project runs the context config stored when it was created (set ${names.length === 1 ? 'it' : 'them'} where you run baton enqueue or the dashboard)`;
}

/**
 * The settings a worker logs when it starts: every value it read, except what may carry a
 * credential (the API key, the webhook secret, webhook URLs, Redis passwords: those are logged
 * elsewhere in masked form) and the sandbox setting (logged as the sandbox decision).
 */
export function describeWorkerConfig(config: WorkerConfig): Record<string, unknown> {
  const {
    apiKey: _apiKey,
    webhookSecret: _webhookSecret,
    webhookUrls: _webhookUrls,
    redis: _redis,
    sandbox: _sandbox,
    baseUrl,
    ...settings
  } = config;
  // A base URL's path or query may hold a token; its origin says where requests go.
  return { ...settings, baseUrl: baseUrl === undefined ? null : new URL(baseUrl).origin };
}

/** Default model when `BATON_MODEL` is not set. */
export const DEFAULT_MODEL = 'claude-sonnet-4-6';

/**
 * Reads and validates the worker's configuration. Throws `WorkerError('invalid_config')` whose
 * message has one line per problem (the process prints it and exits non-zero).
 */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const problems: string[] = [];
  let redis: RedisTarget | undefined;
  try {
    redis = readRedisTarget(env);
  } catch (error) {
    if (!(error instanceof RedisTargetError)) throw error;
    problems.push(error.message);
  }
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.map(String).join('.');
      problems.push(issue.message.includes(key) ? issue.message : `${key}: ${issue.message}`);
    }
  }
  const simulator =
    isSimulatedModel(env.BATON_MODEL?.trim()) || /^(1|true|yes)$/i.test(env.BATON_SIMULATOR ?? '');
  const apiKey = env.ANTHROPIC_API_KEY?.trim();
  if (!simulator && !apiKey) {
    problems.push(
      'ANTHROPIC_API_KEY is not set: set it, or choose the simulator with BATON_MODEL=sim',
    );
  }
  const webhookSecret = env.BATON_WEBHOOK_SECRET?.trim() ?? '';
  if (parsed.success && parsed.data.BATON_WEBHOOK_URL.length > 0 && webhookSecret === '') {
    problems.push(
      'BATON_WEBHOOK_SECRET is not set: webhooks are signed, so BATON_WEBHOOK_URL needs a secret',
    );
  } else if (webhookSecret !== '') {
    try {
      webhookSigningKey(webhookSecret);
    } catch (error) {
      problems.push(`BATON_WEBHOOK_SECRET: ${describeError(error)}`);
    }
  }
  let sandbox: SandboxSetting | undefined;
  try {
    sandbox = parseSandboxSetting(env.BATON_SANDBOX);
  } catch (error) {
    problems.push(error instanceof WorkspaceError ? error.message : String(error));
  }
  let mcp: McpConfig | undefined;
  const mcpFile = env[MCP_CONFIG_ENV_VARIABLE]?.trim() ?? '';
  if (mcpFile !== '') {
    try {
      mcp = loadMcpConfigFile(mcpFile, MCP_CONFIG_ENV_VARIABLE);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
  if (problems.length > 0 || !parsed.success || sandbox === undefined || redis === undefined) {
    throw new WorkerError('invalid_config', problems.join('\n'));
  }
  const values = parsed.data;
  const home = path.resolve(
    values.BATON_HOME && values.BATON_HOME !== '' ? values.BATON_HOME : '.baton',
  );
  return {
    redis,
    prefix: values.BATON_PREFIX,
    apiKey: apiKey || 'simulator',
    baseUrl:
      values.ANTHROPIC_BASE_URL && values.ANTHROPIC_BASE_URL !== ''
        ? values.ANTHROPIC_BASE_URL
        : undefined,
    simulator,
    model:
      values.BATON_MODEL && values.BATON_MODEL !== ''
        ? values.BATON_MODEL
        : simulator
          ? 'sim'
          : DEFAULT_MODEL,
    fallbackModel: values.BATON_FALLBACK_MODEL,
    concurrency: values.BATON_CONCURRENCY,
    httpPort: values.BATON_HTTP_PORT,
    httpHost:
      values.BATON_HTTP_HOST && values.BATON_HTTP_HOST !== ''
        ? values.BATON_HTTP_HOST
        : '127.0.0.1',
    lockDurationMs: values.BATON_LOCK_DURATION_MS,
    stalledIntervalMs: values.BATON_STALLED_INTERVAL_MS,
    maxStalledCount: values.BATON_MAX_STALLED_COUNT,
    leaseTtlMs: values.BATON_LEASE_TTL_MS,
    shutdownGraceMs: values.BATON_SHUTDOWN_GRACE_MS,
    allowEviction: /^(1|true|yes)$/iu.test(values.BATON_ALLOW_EVICTION ?? ''),
    chainDelayMs: values.BATON_CHAIN_DELAY_MS,
    retryDelayMs: values.BATON_RETRY_DELAY_MS,
    maxConsecutiveFailures: values.BATON_MAX_FAILURES,
    modelRequestsPerSecond: values.BATON_MODEL_RPS,
    home,
    checkpointIntervalMs: values.BATON_CHECKPOINT_INTERVAL_MS,
    maxFileBytes: values.BATON_MAX_FILE_BYTES,
    memorySnapshots: values.BATON_MEMORY_SNAPSHOTS !== 'off',
    memorySweepEveryMs: values.BATON_MEMORY_SWEEP_MS,
    memoryIdleTtlMs: values.BATON_MEMORY_IDLE_TTL_MS,
    jobRetentionMs: values.BATON_JOB_RETENTION_MS,
    apiMaxRetries: values.BATON_API_MAX_RETRIES,
    apiRetryBaseMs: values.BATON_API_RETRY_BASE_MS,
    logLevel: values.LOG_LEVEL ?? 'info',
    workerId:
      values.BATON_WORKER_ID && values.BATON_WORKER_ID !== ''
        ? values.BATON_WORKER_ID
        : `${os.hostname()}:${process.pid}`,
    sandbox,
    mcp,
    webhookUrls: values.BATON_WEBHOOK_URL,
    webhookSecret,
    webhookAttempts: values.BATON_WEBHOOK_ATTEMPTS,
    webhookBackoffMs: values.BATON_WEBHOOK_BACKOFF_MS,
  };
}
