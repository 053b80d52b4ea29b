import { afterEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../src/index.js';
import { redisCommand } from './support/redis-command.js';

const servers: RedisServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

describe('kill and restart', () => {
  it('a SIGKILLed append-only server comes back on the same port with every write', async () => {
    const server = await startRedisServer({ appendOnly: true });
    servers.push(server);
    await redisCommand(server.url, 'SET', 'survivor', 'still here');
    await server.kill();
    expect(server.running).toBe(false);
    await expect(redisCommand(server.url, 'PING')).rejects.toThrow(
      /ECONNREFUSED|Connection is closed/,
    );
    await server.restart();
    expect(server.running).toBe(true);
    expect(await redisCommand(server.url, 'GET', 'survivor')).toBe('still here');
  });

  it('a clean SIGTERM shutdown keeps the data too', async () => {
    const server = await startRedisServer({ appendOnly: true });
    servers.push(server);
    await redisCommand(server.url, 'SET', 'survivor', 'after SIGTERM');
    await server.kill('SIGTERM');
    expect(server.running).toBe(false);
    await server.restart();
    expect(await redisCommand(server.url, 'GET', 'survivor')).toBe('after SIGTERM');
  });

  it('without appendOnly the same kill and restart lose the data (nothing is persisted)', async () => {
    const server = await startRedisServer();
    servers.push(server);
    await redisCommand(server.url, 'SET', 'survivor', 'gone');
    await server.kill();
    await server.restart();
    expect(await redisCommand(server.url, 'GET', 'survivor')).toBeNull();
  });

  it('restart on a running server kills it first', async () => {
    const server = await startRedisServer({ appendOnly: true });
    servers.push(server);
    const before = await redisCommand(server.url, 'INFO', 'server');
    await redisCommand(server.url, 'SET', 'survivor', 'across a restart');
    await server.restart();
    const after = await redisCommand(server.url, 'INFO', 'server');
    const processId = (info: unknown) => /process_id:(\d+)/.exec(String(info))?.[1];
    expect(processId(after)).not.toBe(processId(before));
    expect(await redisCommand(server.url, 'GET', 'survivor')).toBe('across a restart');
  });
});
