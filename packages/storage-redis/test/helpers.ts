import { randomUUID } from 'node:crypto';
import type { StoreLimits } from '@baton/core';
import { createRedisMemoryStore, type RedisClient, type RedisMemoryStore } from '../src/index.js';

/** The Redis the tests use. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A namespace nobody else uses. */
export function randomNamespace(): string {
  return `test-${randomUUID()}`;
}

/** Options for `openTestStore`. */
export interface TestStoreOptions {
  namespace?: string;
  limits?: StoreLimits;
  historyDepth?: number;
  historyMaxBytes?: number;
  feedMaxLength?: number;
  accessTimeGranularityMs?: number;
  redis?: RedisClient;
}

const opened: RedisMemoryStore[] = [];

/** A store on a fresh namespace; `cleanupTestStores` clears and closes every one of them. */
export function openTestStore(options: TestStoreOptions = {}): RedisMemoryStore {
  const store = createRedisMemoryStore({
    ...(options.redis === undefined ? { url: REDIS_URL } : { redis: options.redis }),
    namespace: options.namespace ?? randomNamespace(),
    limits: options.limits,
    historyDepth: options.historyDepth,
    historyMaxBytes: options.historyMaxBytes,
    feedMaxLength: options.feedMaxLength,
    accessTimeGranularityMs: options.accessTimeGranularityMs,
  });
  opened.push(store);
  return store;
}

/** Clears every namespace opened by `openTestStore` through the store API, then closes the stores. */
export async function cleanupTestStores(): Promise<void> {
  const stores = opened.splice(0);
  for (const store of stores) {
    await store.clear();
    await store.close();
  }
}
