import { randomHex, type RedisClusterProcesses } from '@baton/test-support';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from './helpers.js';
import { closedPort, oneLine, useRedisCluster } from './redis-fixtures.js';

// A private TLS cluster plus several `baton` processes: slow on a loaded 2-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 90_000 });

/** The first seed says rediss:// and the password once; the others are bare host:port. */
function tlsSeeds(cluster: RedisClusterProcesses): string {
  const [first, ...rest] = cluster.nodes;
  return [
    `rediss://:tls-pw@${first?.host}:${first?.port}`,
    ...rest.map((node) => `${node.host}:${node.port}`),
  ].join(',');
}

const world = useRedisCluster('tls', {
  tls: true,
  password: 'tls-pw',
  // `NODE_EXTRA_CA_CERTS` is how Node trusts a private CA; REDIS_URL is a closed port.
  env: async (cluster) => ({
    REDIS_CLUSTER_NODES: tlsSeeds(cluster),
    REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
    NODE_EXTRA_CA_CERTS: cluster.caFile ?? '',
  }),
});
const { env } = world;

describe('Baton on a TLS Redis Cluster (rediss:// seeds, NODE_EXTRA_CA_CERTS for a private CA)', () => {
  it('a worker runs an enqueued project to completion; logs -f follows it to the end; status reads it', async () => {
    const worker = world.start(['worker', '--port', '0'], {
      BATON_MODEL: 'sim',
      BATON_CHAIN_DELAY_MS: '0',
    });
    await worker.waitForOutput('"worker started"', 60_000);
    expect(worker.stdout()).toContain('"redis":"rediss cluster 127.0.0.1:');
    expect(worker.stdout()).not.toContain('tls-pw');

    const id = `tls-${randomHex(3)}`;
    const enqueued = await runCli(['enqueue', '--project', id, '--goal', 'Greet\n- hello'], {
      cwd: world.dir,
      env: env(),
    });
    expect(enqueued.code, enqueued.stderr).toBe(0);
    // Blocking reads on their own TLS connection, until the project's terminal status event.
    const follow = await runCli(['logs', id, '-f'], { cwd: world.dir, env: env() });
    expect(follow.code, follow.stderr).toBe(0);
    expect(follow.stdout).toMatch(/✓ completed/u);
    const status = await runCli(['status', id, '--json'], { cwd: world.dir, env: env() });
    expect(JSON.parse(status.stdout)).toMatchObject({ id, status: 'completed' });
  });

  it('without the CA, or with redis:// on TLS ports, nothing connects: exit 8, one line, no password', async () => {
    const untrusted = await runCli(['projects'], {
      cwd: world.dir,
      env: env({ NODE_EXTRA_CA_CERTS: undefined }),
    });
    expect(untrusted.code).toBe(8);
    expect(oneLine(untrusted.stderr)).toMatch(
      /^baton: cannot reach Redis at rediss cluster 127\.0\.0\.1:\d+,/u,
    );
    const plain = await runCli(['projects'], {
      cwd: world.dir,
      env: env({ REDIS_CLUSTER_NODES: tlsSeeds(world.cluster).replace('rediss://', 'redis://') }),
    });
    expect(plain.code).toBe(8);
    expect(oneLine(plain.stderr)).toMatch(/^baton: cannot reach Redis at redis cluster /u);
    for (const result of [untrusted, plain]) expect(result.stderr).not.toContain('tls-pw');
  });
});
