import { randomHex, waitFor } from '@baton/test-support';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from './helpers.js';
import { useRedisCluster } from './redis-fixtures.js';

// Six redis-servers, a failover and a worker: slow on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 90_000 });

// A replica per master, promoted one second after its master goes silent.
const world = useRedisCluster('failover', { replicasPerMaster: 1, nodeTimeoutMs: 1_000 });

describe('Redis Cluster failover', () => {
  it('the master of the queue and project keys is SIGKILLed mid-project; its replica takes over and the same worker completes the project', async () => {
    const { cluster, control, dir, env, prefix } = world;
    const worker = world.start(['worker', '--port', '0'], {
      BATON_MODEL: 'sim',
      BATON_CHAIN_DELAY_MS: '0',
      BATON_RETRY_DELAY_MS: '200',
    });
    await worker.waitForOutput('"worker started"', 60_000);

    const id = `failover-${randomHex(3)}`;
    const features = ['one', 'two', 'three', 'four', 'five', 'six'];
    const goal = `Build\n${features.map((name) => `- ${name}`).join('\n')}`;
    const enqueued = await runCli(['enqueue', '--project', id, '--goal', goal], {
      cwd: dir,
      env: env(),
    });
    expect(enqueued.code, enqueued.stderr).toBe(0);

    // Mid-project: the checklist exists and a resume session is running.
    await waitFor(
      `${id} to be running past its first session`,
      async () => {
        const project = await control.getProject(id);
        return project !== null && project.status === 'running' && project.counters.sessions >= 1;
      },
      120_000,
    );
    const master = await cluster.masterOf(prefix);
    const server = cluster.servers[cluster.nodes.findIndex((node) => node.port === master)];
    await server?.kill('SIGKILL');
    const promoted = await waitFor(
      `a replica to take over the slot of ${prefix}`,
      async () => {
        const now = await cluster.masterOf(prefix);
        return now !== master ? now : null;
      },
      60_000,
    );
    expect(promoted).not.toBe(master);

    const project = await waitFor(
      `${id} to complete after the failover`,
      async () => {
        const current = await control.getProject(id);
        return current?.status === 'completed' || current?.status === 'failed' ? current : null;
      },
      180_000,
    );
    expect(project.status, project.statusReason ?? '').toBe('completed');
    // Rode through, not recovered from: the running session kept its job lock and no session
    // failed (with ioredis's default retry budget of 16 x 100 ms, the lock renewal fails during
    // the failover and the session is aborted and resumed).
    const problems = worker
      .stdout()
      .split('\n')
      .filter((line) => /"level":(50|60)/u.test(line) || line.includes('job lock lost'));
    expect(problems).toEqual([]);
    expect(project.counters).toMatchObject({ consecutiveFailures: 0, interruptions: 0 });
    expect(project.counters.featuresPassing).toBe(features.length);
    // The worker rode through it: still running, never restarted.
    expect(worker.stdout()).not.toContain('"worker stopped"');
    const status = await runCli(['status', id, '--json'], { cwd: dir, env: env() });
    expect(JSON.parse(status.stdout)).toMatchObject({ id, status: 'completed' });
    expect(await world.stop(worker)).toBe(0);
  });
});
