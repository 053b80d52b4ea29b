import { afterEach, describe, expect, it } from 'vitest';
import { freePort, isPortFree, startRedisServer, type RedisServer } from '../src/index.js';
import { redisCommand } from './support/redis-command.js';

const servers: RedisServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

describe('startRedisServer', () => {
  it('starts a server of its own on a free loopback port that answers PING', async () => {
    const first = await startRedisServer();
    servers.push(first);
    const second = await startRedisServer();
    servers.push(second);
    expect(first.url).toBe(`redis://127.0.0.1:${first.port}`);
    expect(second.port).not.toBe(first.port);
    expect(first.running).toBe(true);
    expect(await redisCommand(first.url, 'PING')).toBe('PONG');
    // Each is its own server: a key written to one is not in the other.
    await redisCommand(first.url, 'SET', 'only-here', '1');
    expect(await redisCommand(second.url, 'GET', 'only-here')).toBeNull();
    expect(await isPortFree(first.port)).toBe(false);
  });

  it('passes appendOnly and extra arguments on to redis-server', async () => {
    const server = await startRedisServer({ appendOnly: true, args: ['--maxmemory', '12mb'] });
    servers.push(server);
    expect(await redisCommand(server.url, 'CONFIG', 'GET', 'appendonly')).toEqual([
      'appendonly',
      'yes',
    ]);
    expect(await redisCommand(server.url, 'CONFIG', 'GET', 'maxmemory')).toEqual([
      'maxmemory',
      String(12 * 1024 * 1024),
    ]);
    expect(await redisCommand(server.url, 'CONFIG', 'GET', 'dir')).toEqual([
      'dir',
      server.directory,
    ]);
  });
});

describe('freePort', () => {
  it('returns a port nothing listens on, and with alsoFreeAt the offset port is free too', async () => {
    const port = await freePort();
    expect(await isPortFree(port)).toBe(true);
    const clusterPort = await freePort({ alsoFreeAt: 10_000 });
    expect(await isPortFree(clusterPort)).toBe(true);
    expect(await isPortFree(clusterPort + 10_000)).toBe(true);
  });
});
