import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, workerWorld, type WorkerWorldTarget } from '../src/index.js';

// What each test saw, checked by the suite after the world's afterEach ran.
const closed: string[] = [];
const seen: WorkerWorldTarget[] = [];

describe('workerWorld()', () => {
  const world = workerWorld({
    open: ({ prefix }) => ({
      first: { close: () => closed.push(`first ${prefix}`) },
      second: { close: () => closed.push(`second ${prefix}`) },
    }),
  });

  it('gives each test a prefix, a home and its parts', async () => {
    seen.push({ url: world.url, prefix: world.prefix, home: world.home, redis: world.redis });
    expect(world.url).toBe(REDIS_URL);
    expect(world.prefix).toMatch(/^\{bt-[0-9a-f]+\}$/u);
    expect(existsSync(world.home)).toBe(true);
    world.closeAfter({ close: () => closed.push(`worker ${world.prefix}`) });
    const redis = new Redis(world.url, { maxRetriesPerRequest: 1 });
    await redis.set(`${world.prefix}:key`, '1');
    redis.disconnect();
  });

  it('a second test gets another prefix', () => {
    seen.push({ url: world.url, prefix: world.prefix, home: world.home, redis: world.redis });
    expect(world.prefix).not.toBe(seen[0]?.prefix);
  });

  afterAll(async () => {
    const [one, two] = seen.map((target) => target.prefix);
    // Test-opened resources first, then the parts in reverse order.
    expect(closed).toEqual([
      `worker ${one}`,
      `second ${one}`,
      `first ${one}`,
      `second ${two}`,
      `first ${two}`,
    ]);
    for (const target of seen) expect(existsSync(target.home)).toBe(false);
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    expect(await redis.keys(`${one}*`)).toEqual([]);
    redis.disconnect();
  });
});

describe('workerWorld({ privateRedis: true })', () => {
  let server: WorkerWorldTarget['redis'];
  const world = workerWorld({ privateRedis: true });

  it('runs a redis-server of its own for the test', async () => {
    server = world.redis;
    expect(world.url).not.toBe(REDIS_URL);
    const redis = new Redis(world.url, { maxRetriesPerRequest: 1 });
    expect(await redis.ping()).toBe('PONG');
    redis.disconnect();
  });

  afterAll(async () => {
    const redis = new Redis(server?.url ?? '', {
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    redis.on('error', () => undefined);
    await expect(redis.connect()).rejects.toThrow();
    redis.disconnect();
  });
});
