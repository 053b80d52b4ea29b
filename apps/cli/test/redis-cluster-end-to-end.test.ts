import { verifyWebhookSignature, type ProjectRecord } from '@baton/projects';
import { randomHex, startWebhookReceiver, waitFor } from '@baton/test-support';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from './helpers.js';
import { closedPort, useRedisCluster } from './redis-fixtures.js';

// A private 3-master cluster plus several `baton` processes: slow on a loaded 2-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 90_000 });

const PASSWORD = 'cluster pw/1';

const world = useRedisCluster('cluster', {
  password: PASSWORD,
  // REDIS_URL names a closed port: only REDIS_CLUSTER_NODES can make anything work.
  env: async () => ({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` }),
});
const { env, start, stop } = world;

function finished(id: string): Promise<ProjectRecord> {
  return waitFor(
    `project ${id} to complete on the cluster`,
    async () => {
      const project = await world.control.getProject(id);
      if (project?.status === 'failed') throw new Error(`${id} failed: ${project.statusReason}`);
      return project?.status === 'completed' ? project : null;
    },
    120_000,
  );
}

/** Reads a Server-Sent Events response; `waitFor` resolves on the first event `match` accepts. */
async function openEventStream(url: string) {
  const abort = new AbortController();
  const response = await fetch(url, { signal: abort.signal });
  expect(response.status).toBe(200);
  const reader = (response.body ?? new ReadableStream<Uint8Array>()).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async waitFor(match: (event: string, data: unknown) => boolean): Promise<void> {
      for (;;) {
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: ?(.*)$/mu.exec(block)?.[1] ?? 'message';
          const data = /^data: ?(.*)$/mu.exec(block)?.[1];
          if (data !== undefined && match(event, JSON.parse(data))) return;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`${url} ended before the expected event`);
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close: () => abort.abort(),
  };
}

async function cli(args: string[]): Promise<string> {
  const result = await runCli(args, { cwd: world.dir, env: env() });
  expect(result.code, `baton ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

describe('Baton on a Redis Cluster (REDIS_CLUSTER_NODES with a password, REDIS_URL ignored)', () => {
  it('baton worker runs an enqueued project to completion; status, logs, memory and the dashboard read it', async () => {
    const receiver = await startWebhookReceiver({});
    const worker = start(['worker', '--port', '0'], {
      BATON_MODEL: 'sim',
      BATON_CHAIN_DELAY_MS: '0',
      BATON_WEBHOOK_URL: receiver.url,
      BATON_WEBHOOK_SECRET: 'cluster-hook',
    });
    await worker.waitForOutput('"worker started"', 60_000);
    // The log names the cluster's seeds, never the password.
    expect(worker.stdout()).toContain(`"redis":"redis cluster ${world.cluster.nodes[0]?.host}`);
    expect(worker.stdout()).not.toContain('cluster pw');

    // The dashboard watches live from before the project exists (its event hub reads the cluster).
    const dashboard = start(['dashboard', '--port', '0', '--json']);
    await dashboard.waitForOutput('"type":"ready"', 60_000);
    const { url } = JSON.parse(dashboard.stdout().split('\n')[0] ?? '') as { url: string };
    const live = await openEventStream(`${url}/api/stream`);

    const id = `cluster-${randomHex(3)}`;
    await cli(['enqueue', '--project', id, '--goal', 'Greet\n- hello\n- bye']);
    const project = await finished(id);
    expect(project.counters).toMatchObject({ featuresPassing: 2, featuresTotal: 2 });
    await live.waitFor(
      (event, data) =>
        event === 'project' &&
        (data as { id?: string }).id === id &&
        (data as { status?: string }).status === 'completed',
    );
    live.close();
    // The webhooks queue runs on the cluster too.
    const delivered = await waitFor('the project.completed webhook', () =>
      receiver.requests.find((request) => request.rawBody.includes('"project.completed"')),
    );
    const signature = delivered.headers['x-baton-signature'] as string | undefined;
    expect(verifyWebhookSignature(delivered.rawBody, 'cluster-hook', signature)).toBe(true);
    await receiver.close();

    const status = JSON.parse(await cli(['status', id, '--json'])) as {
      id: string;
      status: string;
      sessionCommits: unknown[];
    };
    expect(status).toMatchObject({ id, status: 'completed' });
    expect(status.sessionCommits.length).toBe(project.counters.sessions);
    expect(await cli(['status', id])).toMatch(/completed/);

    const logs = await cli(['logs', id]);
    expect(logs).toMatch(/● session 1 \(init\)/u);
    expect(logs).toMatch(/✓ completed/u);

    const listing = await cli(['memory', 'ls', id]);
    expect(listing).toContain('features.json');
    expect(listing).toContain('progress.md');
    const features = JSON.parse(
      await cli(['memory', 'cat', id, '/memories/features.json']),
    ) as Array<{ passes: boolean }>;
    expect(features.map((feature) => feature.passes)).toEqual([true, true]);

    const shown = (await (await fetch(`${url}/api/projects/${id}`)).json()) as {
      project: ProjectRecord;
    };
    expect(shown.project).toMatchObject({ id, status: 'completed' });
    const list = (await (await fetch(`${url}/api/projects`)).json()) as {
      projects: Array<{ id: string }>;
    };
    expect(list.projects.map((entry) => entry.id)).toContain(id);
    const memory = await fetch(
      `${url}/api/projects/${id}/memory/file?path=${encodeURIComponent('/memories/progress.md')}`,
    );
    expect(memory.status).toBe(200);
    const queue = (await (await fetch(`${url}/api/queue`)).json()) as {
      counts: Record<string, number>;
    };
    expect(queue.counts.completed).toBeGreaterThanOrEqual(1);
    // Bull Board, behind the dashboard, reads the same queues.
    const board = await fetch(`${url}/queues/api/queues?activeQueue=baton-sessions`);
    expect(board.status).toBe(200);
    expect(JSON.stringify(await board.json())).toContain('baton-sessions');
    expect(await stop(dashboard)).toBe(0);
    expect(await stop(worker)).toBe(0);
  });

  it('baton up runs worker and dashboard on the cluster', async () => {
    const up = start(['up', '--port', '0', '--json'], { BATON_CHAIN_DELAY_MS: '0' });
    await up.waitForOutput('"type":"ready"', 60_000);
    const ready = JSON.parse(
      up
        .stdout()
        .split('\n')
        .find((line) => line.includes('"type":"ready"')) ?? '',
    ) as { dashboardUrl: string; redisUrl: string; redisSource: string };
    expect(ready.redisSource).toBe('env');
    expect(ready.redisUrl).toBe(
      `redis cluster ${world.cluster.nodes.map((node) => `${node.host}:${node.port}`).join(',')}`,
    );

    const id = `cluster-up-${randomHex(3)}`;
    await cli(['enqueue', '--project', id, '--goal', 'Greet\n- hello']);
    await finished(id);
    const shown = (await (await fetch(`${ready.dashboardUrl}/api/projects/${id}`)).json()) as {
      project: ProjectRecord;
    };
    expect(shown.project.status).toBe('completed');
    expect(await stop(up)).toBe(0);
  });

  it('a bad REDIS_CLUSTER_NODES is one line naming the variable (exit 2), a wrong password exit 8', async () => {
    const bad = await runCli(['status'], {
      cwd: world.dir,
      env: env({ REDIS_CLUSTER_NODES: 'redis://:hunter2@10.0.0.1:7000,rediss://10.0.0.2:7001' }),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe(
      'baton: REDIS_CLUSTER_NODES mixes redis:// and rediss:// nodes: a cluster is all TLS or none.',
    );
    const wrong = await runCli(['projects'], {
      cwd: world.dir,
      env: env({
        REDIS_CLUSTER_NODES: world.cluster.clusterNodesVariable.replaceAll('cluster%20pw', 'nope'),
      }),
    });
    expect(wrong.code).toBe(8);
    expect(wrong.stderr).toMatch(/^baton: cannot reach Redis at redis cluster 127\.0\.0\.1:\d+/u);
    expect(wrong.stderr).not.toContain('nope');
  });
});
