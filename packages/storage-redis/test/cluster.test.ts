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
    ...(limits === undefined ? {} : { limits }),
  });
  return {
    store,
    // A fresh store object: the case may have closed its own.
    cleanup: () => createRedisMemoryStore({ redis: client, namespace }).clear(),
  };
});

describe('Redis Cluster', () => {
  it('spreads namespaces over the masters and keeps each in one slot (no CROSSSLOT)', async () => {
    const namespaces = Array.from({ length: 12 }, () => randomNamespace());
    const stores = namespaces.map((namespace) =>
      createRedisMemoryStore({ redis: client, namespace, historyDepth: 2 }),
    );
    for (const store of stores) {
      await store.write('a/b/c.md', 'x', { mode: 'create' });
      await store.edit('a/b/c.md', (current) => `${current}y`);
      // Within the access-time granularity: HMGET + HGET without a script, on the namespace's slot.
      expect(await store.read('a/b/c.md')).toBe('xy');
      await store.rename('a', 'z');
      expect(await store.list('', { depth: 3 })).toHaveLength(3);
      expect(await store.listHistory('z/b/c.md')).toHaveLength(2);
      expect((await store.sweepExpired({ olderThanMs: 3_600_000 })).removed).toEqual([]);
    }
    const slots = await Promise.all(
      stores.map((store) => client.call('CLUSTER', 'KEYSLOT', store.keys.meta)),
    );
    const keySlots = await Promise.all(
      stores.map((store) => client.call('CLUSTER', 'KEYSLOT', store.keys.file('z/b/c.md'))),
    );
    expect(keySlots).toEqual(slots);
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
