import { describeMemoryStoreConformance } from '@baton/core/testing';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { createRedisMemoryStore } from '../src/index.js';
import { randomNamespace, REDIS_URL } from './helpers.js';

// Cleanup goes through a separate store on a shared client, because a case may close its store.
const cleanupClient = new Redis(REDIS_URL);
afterAll(async () => {
  await cleanupClient.quit();
});

describeMemoryStoreConformance('RedisMemoryStore', async ({ limits }) => {
  const namespace = randomNamespace();
  const store = createRedisMemoryStore({
    url: REDIS_URL,
    namespace,
    limits,
  });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await createRedisMemoryStore({ redis: cleanupClient, namespace }).clear();
    },
  };
});
