import { startRedisCluster, type RedisClusterProcesses } from '@baton/test-support';
import { once } from 'node:events';
import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  answersPing,
  createRedisConnection,
  isCluster,
  producerConnectionOptions,
  readRedisTarget,
  waitForRedis,
  workerConnectionOptions,
  type RedisClient,
} from '@baton/storage-redis';

let cluster: RedisClusterProcesses;
const opened: RedisClient[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ password: 'cluster s3cret' });
}, 60_000);

afterAll(async () => {
  for (const client of opened) client.disconnect();
  await cluster?.stop();
});

function open(tuning = producerConnectionOptions()): RedisClient {
  const target = readRedisTarget({
    REDIS_URL: 'redis://127.0.0.1:1',
    REDIS_CLUSTER_NODES: cluster.clusterNodesVariable,
  });
  const client = createRedisConnection(target, tuning);
  client.on('error', () => undefined);
  opened.push(client);
  return client;
}

it('keys spread over every master through one cluster connection', async () => {
  const client = open();
  expect(isCluster(client)).toBe(true);
  await waitForRedis(client, 10_000);
  const keys = Array.from({ length: 30 }, (_, index) => `conn-test:{k${index}}`);
  for (const key of keys) await client.set(key, key);
  for (const key of keys) expect(await client.get(key)).toBe(key);
  const owners = new Set<number>();
  for (const key of keys) {
    const slot = Number(await client.call('CLUSTER', 'KEYSLOT', key));
    const ranges = (await client.call('CLUSTER', 'SLOTS')) as Array<
      [number, number, [string, number]]
    >;
    const owner = ranges.find(([from, to]) => slot >= from && slot <= to);
    owners.add(Number(owner?.[2][1]));
  }
  expect(owners.size).toBe(3);
  await client.del(...keys.slice(0, 1));
});

it('BullMQ queues with a {hash tag} prefix run jobs on the cluster', async () => {
  const prefix = '{conn-test}';
  const producer = open();
  const queue = new Queue('jobs', { connection: producer, prefix });
  const worker = new Worker('jobs', async (job) => (job.data as { n: number }).n * 2, {
    connection: open(workerConnectionOptions()),
    prefix,
  });
  try {
    const completed = once(worker, 'completed');
    const job = await queue.add('double', { n: 21 });
    const [finished, result] = (await completed) as [{ id?: string }, number];
    expect([finished.id, result]).toEqual([job.id, 42]);
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
  }
});

it('a wrong password does not connect', async () => {
  const wrong = cluster.clusterNodesVariable.replaceAll('cluster%20s3cret', 'wrong');
  expect(await answersPing(readRedisTarget({ REDIS_CLUSTER_NODES: wrong }), 2_000)).toBe(false);
  expect(
    await answersPing(
      readRedisTarget({ REDIS_CLUSTER_NODES: cluster.clusterNodesVariable }),
      5_000,
    ),
  ).toBe(true);
});
