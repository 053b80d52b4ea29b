import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A `redis-server` of our own (AOF on, fsync always) that a test may stop and start again. */
export interface PrivateRedis {
  url: string;
  port: number;
  start(): Promise<void>;
  /** SIGTERM (Redis flushes the AOF) and wait for exit. */
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

export async function createPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const directory = await mkdtemp(path.join(os.tmpdir(), 'baton-redis-'));
  let child: ChildProcess | null = null;
  const url = `redis://127.0.0.1:${port}`;
  const start = async () => {
    child = spawn(
      '/usr/bin/redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        directory,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const probe = new Redis(url, {
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        lazyConnect: true,
      });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') {
          // Wait until the AOF is loaded (LOADING errors otherwise).
          const info = await probe.info('persistence');
          if (info.includes('loading:0')) return;
        }
      } catch {
        // not up yet
      } finally {
        probe.disconnect();
      }
      if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGTERM');
    });
  };
  return {
    url,
    port,
    start,
    stop,
    async destroy() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
