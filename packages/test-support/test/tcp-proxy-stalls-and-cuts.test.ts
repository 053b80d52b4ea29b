import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedisServer, startTcpProxy, type RedisServer, type TcpProxy } from '../src/index.js';

describe('the TCP proxy between a client and Redis', () => {
  let redis: RedisServer | undefined;
  let proxy: TcpProxy | undefined;
  const clients: Redis[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) client.disconnect();
    await proxy?.close();
    await redis?.stop();
  });

  it('a stall holds a write until restore, then delivers it; a cut resets and refuses', async () => {
    redis = await startRedisServer();
    proxy = await startTcpProxy({ targetPort: redis.port });
    const direct = new Redis(redis.url);
    const through = new Redis(proxy.url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
    through.on('error', () => undefined);
    clients.push(direct, through);
    expect(await through.ping()).toBe('PONG');

    proxy.stall();
    let landed = false;
    const late = through.set('late', 'written during the stall').then(() => (landed = true));
    // Redis answers the direct client while the stalled write is still held by the proxy.
    expect(await direct.get('late')).toBeNull();
    expect(landed).toBe(false);
    proxy.restore();
    await late;
    expect(await direct.get('late')).toBe('written during the stall');

    const closed = new Promise((resolve) => through.once('close', resolve));
    proxy.cut();
    await closed;
    const refused = new Redis(proxy.url, { retryStrategy: () => null, lazyConnect: true });
    refused.on('error', () => undefined);
    clients.push(refused);
    await expect(refused.connect()).rejects.toThrow();
    proxy.restore();
    expect(await through.ping()).toBe('PONG');
  });
});
