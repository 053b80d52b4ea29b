import { describeMemoryStoreConformance } from '@baton/core/testing';
import { startRedisCluster, type RedisClusterProcesses } from '@baton/test-support';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisMemoryStore } from '../src/index.js';
import { randomNamespace } from './helpers.js';

// One private 3-master cluster for the whole file; every case gets its own namespace on it.
let cluster: RedisClusterProcesses;
let client: Cluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
  client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
}, 60_000);

afterAll(async () => {
  await client.quit();
  await cluster.stop();
});

describeMemoryStoreConformance('RedisMemoryStore on Redis Cluster', async ({ limits }) => {
  const namespace = randomNamespace();
  const store = createRedisMemoryStore({
    redis: client,
    namespace,
    limits,
  });
  return {
    store,
    // A fresh store object: the case may have closed its own.
    cleanup: () => createRedisMemoryStore({ redis: client, namespace }).clear(),
  };
});

/** About 100 KB: staged in a key of its own before the write script runs. */
const big = 'cluster line\n'.repeat(8_000);

describe('Redis Cluster', () => {
  it('spreads namespaces over the masters and keeps each in one slot (no CROSSSLOT)', async () => {
    const namespaces = Array.from({ length: 12 }, () => randomNamespace());
    const stores = namespaces.map((namespace) =>
      createRedisMemoryStore({ redis: client, namespace, historyDepth: 2 }),
    );
    for (const store of stores) {
      await store.write('a/b/c.md', 'x', { mode: 'create' });
      await store.edit('a/b/c.md', (current) => `${current}y`);
      // Within the access-time granularity: a GET of the body without a script, on the namespace's slot.
      expect(await store.read('a/b/c.md')).toBe('xy');
      // A large write: the staged body (SETEX) and the script land on the same node.
      await store.write('a/big.md', big, { mode: 'create' });
      expect(
        await createRedisMemoryStore({ redis: client, namespace: store.namespace }).read(
          'a/big.md',
        ),
      ).toBe(big);
      await store.delete('a/big.md');
      await store.rename('a', 'z');
      expect(await store.list('', { depth: 3 })).toHaveLength(3);
      expect(await store.listHistory('z/b/c.md')).toHaveLength(2);
      expect((await store.sweepExpired({ olderThanMs: 3_600_000 })).removed).toEqual([]);
    }
    const slots = await Promise.all(
      stores.map((store) => client.call('CLUSTER', 'KEYSLOT', store.keys.meta)),
    );
    for (const key of [
      (store: (typeof stores)[number]) => store.keys.file('z/b/c.md'),
      (store: (typeof stores)[number]) => store.keys.body('z/b/c.md'),
      (store: (typeof stores)[number]) => store.keys.writeStage('any'),
      (store: (typeof stores)[number]) => store.keys.kept('1:1'),
    ]) {
      const keySlots = await Promise.all(
        stores.map((store) => client.call('CLUSTER', 'KEYSLOT', key(store))),
      );
      expect(keySlots).toEqual(slots);
    }
    const owners = new Set(
      slots.map((slot) =>
        client.nodes('master').findIndex((node) => node.options.port === ownerPort(Number(slot))),
      ),
    );
    expect(owners.size).toBeGreaterThan(1);
    for (const store of stores) {
      await store.clear();
    }
  });
});

function ownerPort(slot: number): number | undefined {
  const slots = (client as unknown as { slots: string[][] }).slots[slot];
  return Number(slots?.[0]?.split(':')[1]);
}
