// docs/workers.md's configuration table is a promise to operators: each variable it lists changes
// what the worker process does. This starts the real entry point (`node dist/main.js`) with every
// documented variable set to a value other than its default and reads them back from the
// worker's "worker started" line. A variable added to the table without a case here fails.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REDIS_URL, deletePrefix, randomHex } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { WORKER_ENV_VARIABLES } from '../src/config.js';
import { spawnWorker, stopAll, type WorkerProcess } from './support/worker-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every variable named in the first column of the configuration table of docs/workers.md. */
async function documentedVariables(): Promise<string[]> {
  const docs = await readFile(path.join(root, 'docs/workers.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## Configuration'));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| variable')));
  return table
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)])
    .map((match) => match[1] ?? '');
}

/** Variables whose effect other tests observe from the entry point: the file that does. */
const COVERED_ELSEWHERE: Record<string, string> = {
  REDIS_URL: 'apps/worker/test/support/worker-process.ts',
  REDIS_CLUSTER_NODES: 'apps/cli/test/redis-cluster-end-to-end.test.ts',
  ANTHROPIC_API_KEY: 'apps/worker/test/support/worker-process.ts',
  ANTHROPIC_BASE_URL: 'apps/worker/test/support/worker-process.ts',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'apps/cli/test/traces-over-otlp.test.ts',
  OTEL_SERVICE_NAME: 'apps/cli/test/traces-over-otlp.test.ts',
  BATON_ALLOW_EVICTION: 'apps/worker/test/redis-that-loses-data-is-refused-or-reported.test.ts',
};

describe('every variable in docs/workers.md changes the worker process', () => {
  const workers: WorkerProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await stopAll(workers);
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('reads each one, as the worker started line shows', async () => {
    const prefix = `{test-docvars-${randomHex(4)}}`;
    const home = await mkdtemp(path.join(os.tmpdir(), 'baton-docvars-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    cleanups.push(() => deletePrefix(prefix, REDIS_URL));
    const mcpFile = path.join(home, 'mcp.json');
    await writeFile(
      mcpFile,
      JSON.stringify({
        mcpServers: {
          docs: { command: 'node', args: ['server.js'], env: { TOKEN: '${DOCS_MCP_TOKEN}' } },
        },
      }),
    );

    // variable -> [value given, where it shows in the log line, what it shows]
    const cases: Record<string, [string, (started: Started) => unknown, unknown]> = {
      BATON_PREFIX: [prefix, (started) => started.prefix, prefix],
      BATON_MODEL: ['claude-haiku-4-5', (started) => started.settings.model, 'claude-haiku-4-5'],
      BATON_SIMULATOR: ['1', (started) => started.settings.simulator, true],
      BATON_FALLBACK_MODEL: [
        'claude-opus-4-1',
        (started) => started.settings.fallbackModel,
        'claude-opus-4-1',
      ],
      BATON_CONCURRENCY: ['3', (started) => started.concurrency, 3],
      BATON_HTTP_PORT: ['0', (started) => started.settings.httpPort, 0],
      BATON_HTTP_HOST: ['127.0.0.2', (started) => started.settings.httpHost, '127.0.0.2'],
      BATON_LOCK_DURATION_MS: ['7000', (started) => started.lockDurationMs, 7000],
      BATON_STALLED_INTERVAL_MS: ['3500', (started) => started.stalledIntervalMs, 3500],
      BATON_MAX_STALLED_COUNT: ['42', (started) => started.settings.maxStalledCount, 42],
      BATON_LEASE_TTL_MS: ['9000', (started) => started.settings.leaseTtlMs, 9000],
      BATON_SHUTDOWN_GRACE_MS: ['1234', (started) => started.settings.shutdownGraceMs, 1234],
      BATON_CHAIN_DELAY_MS: ['17', (started) => started.settings.chainDelayMs, 17],
      BATON_RETRY_DELAY_MS: ['4321', (started) => started.settings.retryDelayMs, 4321],
      BATON_MAX_FAILURES: ['5', (started) => started.settings.maxConsecutiveFailures, 5],
      BATON_MODEL_RPS: ['7', (started) => started.settings.modelRequestsPerSecond, 7],
      BATON_API_MAX_RETRIES: ['2', (started) => started.settings.apiMaxRetries, 2],
      BATON_API_RETRY_BASE_MS: ['250', (started) => started.settings.apiRetryBaseMs, 250],
      BATON_HOME: [home, (started) => started.settings.home, home],
      BATON_MAX_FILE_BYTES: ['1048576', (started) => started.settings.maxFileBytes, 1048576],
      // What `off` does is seen from `baton worker` in apps/cli/test/adopt-takes-back-a-project-redis-lost.test.ts.
      BATON_MEMORY_SNAPSHOTS: ['off', (started) => started.settings.memorySnapshots, false],
      BATON_CHECKPOINT_INTERVAL_MS: [
        '2500',
        (started) => started.settings.checkpointIntervalMs,
        2500,
      ],
      BATON_MEMORY_SWEEP_MS: ['120000', (started) => started.settings.memorySweepEveryMs, 120_000],
      BATON_MEMORY_IDLE_TTL_MS: [
        '86400000',
        (started) => started.settings.memoryIdleTtlMs,
        86_400_000,
      ],
      BATON_JOB_RETENTION_MS: ['3600000', (started) => started.settings.jobRetentionMs, 3_600_000],
      BATON_WORKER_ID: ['docs-worker', (started) => started.settings.workerId, 'docs-worker'],
      BATON_SANDBOX: [
        '{"limits":{"memoryMb":1024}}',
        (started) => /1024 MiB/.test(JSON.stringify(started.sandbox)),
        true,
      ],
      BATON_WEBHOOK_URL: [
        'http://127.0.0.1:9/hooks/secret-path',
        (started) => started.webhooks,
        ['http://127.0.0.1:9'],
      ],
      BATON_WEBHOOK_SECRET: [
        'docs-secret',
        (started) => JSON.stringify(started).includes('docs-secret'),
        false,
      ],
      BATON_WEBHOOK_ATTEMPTS: ['2', (started) => started.settings.webhookAttempts, 2],
      BATON_WEBHOOK_BACKOFF_MS: ['100', (started) => started.settings.webhookBackoffMs, 100],
      LOG_LEVEL: ['debug', (started) => started.settings.logLevel, 'debug'],
      // The worker-wide MCP servers, as references: the variable's value is never read into it.
      BATON_MCP_CONFIG: [
        mcpFile,
        (started) => started.settings.mcp,
        {
          mcpServers: {
            docs: { command: 'node', args: ['server.js'], env: { TOKEN: '${DOCS_MCP_TOKEN}' } },
          },
        },
      ],
    };

    const documented = await documentedVariables();
    expect(documented.length).toBeGreaterThan(30);
    for (const name of documented) {
      if (name in COVERED_ELSEWHERE) {
        const file = await readFile(path.join(root, COVERED_ELSEWHERE[name] ?? ''), 'utf8');
        expect(file, `${name} should be set in ${COVERED_ELSEWHERE[name]}`).toContain(name);
        continue;
      }
      expect(cases, `docs/workers.md lists ${name}: add a case here`).toHaveProperty(name);
      // The typo guard warns about unknown BATON_* names: a documented one must be known.
      if (name.startsWith('BATON_')) expect(WORKER_ENV_VARIABLES).toContain(name);
    }

    const env = Object.fromEntries(Object.entries(cases).map(([name, [value]]) => [name, value]));
    const worker = await spawnWorker({ REDIS_URL, ...env, DOCS_MCP_TOKEN: 'docs-mcp-token-value' });
    workers.push(worker);
    const started = (await worker.waitForLog(
      (line) => line.msg === 'worker started',
    )) as unknown as Started;
    for (const [name, [, read, expected]] of Object.entries(cases)) {
      expect(read(started), name).toEqual(expected);
    }
    // The simulator was started by the worker itself (BATON_SIMULATOR=1 without a base URL).
    expect(started.settings.baseUrl).toBeNull();
    expect(started.settings).not.toHaveProperty('apiKey');
    expect(started.settings).not.toHaveProperty('webhookSecret');
    expect(JSON.stringify(started)).not.toContain('docs-mcp-token-value');
    // The chosen interface answers the probes.
    const response = await fetch(`http://127.0.0.2:${worker.httpPort}/livez`);
    expect(response.status).toBe(200);
  }, 60_000);
});

interface Started {
  prefix: string;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  sandbox: unknown;
  webhooks: unknown;
  settings: Record<string, unknown>;
}
