// A project outside the monorepo using Baton's published libraries with its own (newest)
// @anthropic-ai/sdk and ioredis: the SDK's own tool runner drives Baton's memory tool over the
// filesystem store and the Redis store. The test that installs this copies it into a temp dir;
// the simulator it talks to decides which memory commands to send and records the results.
import Anthropic from '@anthropic-ai/sdk';
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { createFileSystemStore, createMemoryTool, type MemoryStore } from '@baton/core';
import { contextRequestParams, defineContextConfig } from '@baton/context-config';
import { createRedisMemoryStore } from '@baton/storage-redis';
import { Redis } from 'ioredis';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

const client = new Anthropic({ apiKey: 'consumer', baseURL: required('SIM_URL'), maxRetries: 0 });
const context = defineContextConfig({ preset: 'coding' });

async function session(label: string, store: MemoryStore): Promise<void> {
  const memory = createMemoryTool({ store, session: label });
  const final = await client.beta.messages
    .toolRunner({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: `consumer session: ${label}` }],
      tools: [betaMemoryTool(memory.handlers)],
      ...contextRequestParams(context),
    })
    .runUntilDone();
  const text = final.content.find((block) => block.type === 'text');
  console.log(`${label}: ${text?.type === 'text' ? text.text : '(no text)'}`);
}

const fileStore = await createFileSystemStore({ root: required('MEMORY_ROOT') });
try {
  await session('filesystem', fileStore);
} finally {
  await fileStore.close();
}

// The consumer's own ioredis client: the store takes it as is and never closes it.
const redis = new Redis(required('REDIS_URL'), { maxRetriesPerRequest: 1 });
const redisStore = createRedisMemoryStore({
  redis,
  prefix: required('REDIS_PREFIX'),
  namespace: 'consumer',
});
try {
  await session('redis', redisStore);
  await redisStore.clear();
} finally {
  await redisStore.close();
  redis.disconnect();
}
