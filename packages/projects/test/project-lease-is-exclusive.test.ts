import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deletePrefix, REDIS_URL, waitFor } from '@baton/test-support';
import {
  acquireProjectLease,
  createKeys,
  createModelRateLimiter,
  type BatonKeys,
} from '../src/index.js';
import { randomPrefix } from './support/redis.js';

describe('the per-project lease and the shared model rate limit', () => {
  let prefix: string;
  let keys: BatonKeys;
  const connections: Redis[] = [];
  const connect = () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    connections.push(redis);
    return redis;
  };

  beforeEach(() => {
    prefix = randomPrefix();
    keys = createKeys(prefix);
  });
  afterEach(async () => {
    for (const redis of connections.splice(0)) redis.disconnect();
    await deletePrefix(prefix);
  });

  it('gives a project to exactly one of many concurrent claimants', async () => {
    const claims = await Promise.all(
      Array.from({ length: 20 }, () =>
        acquireProjectLease({ redis: connect(), keys, ttlMs: 5000 }, 'p1'),
      ),
    );
    const winners = claims.filter((claim) => claim.acquired);
    expect(winners).toHaveLength(1);
    for (const claim of claims) if (!claim.acquired) expect(claim.retryInMs).toBeGreaterThan(0);
  });

  it('only the holder renews or releases it (compare-and-delete)', async () => {
    const redis = connect();
    const first = await acquireProjectLease({ redis, keys, ttlMs: 300 }, 'p2');
    if (!first.acquired) throw new Error('expected the lease');
    expect(await first.lease.renew()).toEqual({ owned: true, status: '' });
    // Let it expire and be taken by someone else: the old holder can neither renew nor delete it.
    await waitFor(
      'lease expiry',
      async () => (await redis.exists(keys.lease('p2'))) === 0,
      5000,
      20,
    );
    const second = await acquireProjectLease({ redis, keys, ttlMs: 5000 }, 'p2');
    expect(second.acquired).toBe(true);
    // Fencing tokens only grow: the later holder's is higher.
    if (second.acquired) expect(second.lease.fence).toBeGreaterThan(first.lease.fence);
    expect((await first.lease.renew()).owned).toBe(false);
    expect(await first.lease.release()).toBe(false);
    expect(await redis.exists(keys.lease('p2'))).toBe(1);
    if (second.acquired) expect(await second.lease.release()).toBe(true);
    expect(await redis.exists(keys.lease('p2'))).toBe(0);
  });

  it('shares one request rate between limiters on different connections', async () => {
    const options = { key: keys.modelRateLimit, requestsPerSecond: 50, burst: 5 };
    const limiters = [
      createModelRateLimiter({ ...options, redis: connect() }),
      createModelRateLimiter({ ...options, redis: connect() }),
    ];
    const started = Date.now();
    await Promise.all(Array.from({ length: 30 }, (_, index) => limiters[index % 2]!.acquire()));
    const elapsed = Date.now() - started;
    // 5 from the burst, 25 more at 50/s: at least ~500 ms whatever the number of workers.
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(5000);
  });
});
