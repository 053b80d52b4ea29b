import { createBatonControl, readRedisTarget, type BatonControl } from '@baton/projects';
import {
  randomHex,
  startRedisCluster,
  waitFor,
  type RedisClusterProcesses,
} from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliEnv, runCli, startCli, tempDir, type CliProcess } from './helpers.js';

// Six redis-servers, a failover and a worker: slow on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 90_000 });

let cluster: RedisClusterProcesses;
let dir: string;
let cleanupDir: () => Promise<void>;
let prefix: string;
let control: BatonControl;
const running: CliProcess[] = [];

beforeAll(async () => {
  // A replica per master, promoted one second after its master goes silent.
  cluster = await startRedisCluster({ replicasPerMaster: 1, nodeTimeoutMs: 1_000 });
  ({ dir, cleanup: cleanupDir } = await tempDir());
  prefix = `{cli-failover-${randomHex(4)}}`;
  control = createBatonControl({
    target: readRedisTarget({ REDIS_CLUSTER_NODES: cluster.clusterNodesVariable }),
    prefix,
  });
});

afterAll(async () => {
  for (const process of running.splice(0)) {
    process.kill('SIGKILL');
    await process.done;
  }
  await control?.close();
  await cluster?.stop();
  await cleanupDir?.();
});

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cliEnv(dir, {
    REDIS_CLUSTER_NODES: cluster.clusterNodesVariable,
    BATON_PREFIX: prefix,
    ...extra,
  });
}

describe('Redis Cluster failover', () => {
  it('the master of the queue and project keys is SIGKILLed mid-project; its replica takes over and the same worker completes the project', async () => {
    const worker = startCli(['worker', '--port', '0'], {
      cwd: dir,
      env: env({ BATON_MODEL: 'sim', BATON_CHAIN_DELAY_MS: '0', BATON_RETRY_DELAY_MS: '200' }),
    });
    running.push(worker);
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
    worker.kill('SIGTERM');
    expect((await worker.done).code).toBe(0);
  });
});
