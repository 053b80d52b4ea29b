import { randomHex, startRedisCluster, type RedisClusterProcesses } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliEnv, runCli, startCli, tempDir, type CliProcess } from './helpers.js';
import { closedPort, oneLine } from './redis-fixtures.js';

// A private TLS cluster plus several `baton` processes: slow on a loaded 2-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 90_000 });

let cluster: RedisClusterProcesses;
let dir: string;
let cleanupDir: () => Promise<void>;
let prefix: string;
/** The first seed says rediss:// and the password once; the others are bare host:port. */
let nodesVariable: string;
let caFile: string;
const running: CliProcess[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ tls: true, password: 'tls-pw' });
  ({ dir, cleanup: cleanupDir } = await tempDir());
  prefix = `{cli-tls-${randomHex(4)}}`;
  const [first, ...rest] = cluster.nodes;
  nodesVariable = [
    `rediss://:tls-pw@${first?.host}:${first?.port}`,
    ...rest.map((node) => `${node.host}:${node.port}`),
  ].join(',');
  caFile = cluster.caFile ?? '';
});

afterAll(async () => {
  for (const process of running.splice(0)) {
    process.kill('SIGKILL');
    await process.done;
  }
  await cluster?.stop();
  await cleanupDir?.();
});

/** `NODE_EXTRA_CA_CERTS` is how Node trusts a private CA; REDIS_URL is a closed port. */
async function env(extra: Record<string, string | undefined> = {}): Promise<NodeJS.ProcessEnv> {
  return cliEnv(dir, {
    REDIS_CLUSTER_NODES: nodesVariable,
    REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
    BATON_PREFIX: prefix,
    NODE_EXTRA_CA_CERTS: caFile,
    ...extra,
  });
}

describe('Baton on a TLS Redis Cluster (rediss:// seeds, NODE_EXTRA_CA_CERTS for a private CA)', () => {
  it('a worker runs an enqueued project to completion; logs -f follows it to the end; status reads it', async () => {
    const worker = startCli(['worker', '--port', '0'], {
      cwd: dir,
      env: await env({ BATON_MODEL: 'sim', BATON_CHAIN_DELAY_MS: '0' }),
    });
    running.push(worker);
    await worker.waitForOutput('"worker started"', 60_000);
    expect(worker.stdout()).toContain('"redis":"rediss cluster 127.0.0.1:');
    expect(worker.stdout()).not.toContain('tls-pw');

    const id = `tls-${randomHex(3)}`;
    const enqueued = await runCli(['enqueue', '--project', id, '--goal', 'Greet\n- hello'], {
      cwd: dir,
      env: await env(),
    });
    expect(enqueued.code, enqueued.stderr).toBe(0);
    // Blocking reads on their own TLS connection, until the project's terminal status event.
    const follow = await runCli(['logs', id, '-f'], { cwd: dir, env: await env() });
    expect(follow.code, follow.stderr).toBe(0);
    expect(follow.stdout).toMatch(/✓ completed/u);
    const status = await runCli(['status', id, '--json'], { cwd: dir, env: await env() });
    expect(JSON.parse(status.stdout)).toMatchObject({ id, status: 'completed' });
  });

  it('without the CA, or with redis:// on TLS ports, nothing connects: exit 8, one line, no password', async () => {
    const untrusted = await runCli(['projects'], {
      cwd: dir,
      env: await env({ NODE_EXTRA_CA_CERTS: undefined }),
    });
    expect(untrusted.code).toBe(8);
    expect(oneLine(untrusted.stderr)).toMatch(
      /^baton: cannot reach Redis at rediss cluster 127\.0\.0\.1:\d+,/u,
    );
    const plain = await runCli(['projects'], {
      cwd: dir,
      env: await env({ REDIS_CLUSTER_NODES: nodesVariable.replace('rediss://', 'redis://') }),
    });
    expect(plain.code).toBe(8);
    expect(oneLine(plain.stderr)).toMatch(/^baton: cannot reach Redis at redis cluster /u);
    for (const result of [untrusted, plain]) expect(result.stderr).not.toContain('tls-pw');
  });
});
