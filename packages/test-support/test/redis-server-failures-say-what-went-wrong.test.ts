import { describe, expect, it } from 'vitest';
import { startRedisServer } from '../src/index.js';

describe('startRedisServer failures', () => {
  it('a missing binary says how to install redis-server', async () => {
    await expect(startRedisServer({ binary: '/nonexistent/bin/redis-server' })).rejects.toThrow(
      'redis-server binary not found ("/nonexistent/bin/redis-server"): install it with ' +
        '`apt-get install redis-server`, or set REDIS_SERVER_BIN to its path',
    );
  });

  it('a server that exits at start fails at once with its log', async () => {
    const started = Date.now();
    await expect(startRedisServer({ args: ['--no-such-directive', 'x'] })).rejects.toThrow(
      /exited with code 1 before answering PING: [\s\S]*Bad directive/,
    );
    // Not the 10 s start timeout: the exit is noticed as it happens.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a port another Redis holds is reported, not mistaken for its own server', async () => {
    // The holder answers PING on that port: only the process id tells the two apart.
    const holder = await startRedisServer();
    try {
      await expect(startRedisServer({ port: holder.port })).rejects.toThrow(
        /exited with code 1 before answering PING: [\s\S]*Address already in use/,
      );
    } finally {
      await holder.stop();
    }
  });
});
