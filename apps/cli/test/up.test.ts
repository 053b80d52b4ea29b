import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { REDIS_URL, waitFor } from '@baton/test-support';
import { answersPing as answersPingTarget, parseRedisUrl } from '@baton/projects';
import { closedPort, oneLine, redisCliWorld } from './redis-fixtures.js';

// Each test spawns `baton` (a few seconds per process on a loaded 2-core machine).
vi.setConfig({ testTimeout: 120_000 });

const world = redisCliWorld();

interface Ready {
  type: 'ready';
  dashboardUrl: string;
  redisUrl: string;
  redisSource: string;
  redisDataDirectory: string | null;
  redisPid: number | null;
  simulator: boolean;
}

function readyLine(stdout: string): Ready {
  const line = stdout.split('\n').find((text) => text.includes('"type":"ready"'));
  if (line === undefined) throw new Error(`no ready line in ${stdout}`);
  return JSON.parse(line) as Ready;
}

function answersPing(url: string, timeoutMs: number): Promise<boolean> {
  return answersPingTarget(parseRedisUrl(url), timeoutMs);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('baton up', () => {
  it('starts its own redis-server (append-only, under BATON_HOME/redis) when none answers, and stops it on exit', async () => {
    const { home } = world;
    const probe = await closedPort();
    const up = world.start(['up', '--port', '0', '--json'], {
      REDIS_URL: undefined,
      BATON_HOME: home,
      BATON_REDIS_PROBE_URL: `redis://127.0.0.1:${probe}`,
    });
    await up.waitForOutput('"type":"ready"', 60_000);
    const ready = readyLine(up.stdout());
    expect(ready).toMatchObject({
      redisSource: 'child',
      redisDataDirectory: path.join(home, 'redis'),
      simulator: true,
    });
    expect(ready.redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.redisUrl).not.toBe(`redis://127.0.0.1:${probe}`);
    const pid = ready.redisPid ?? 0;
    expect(alive(pid)).toBe(true);
    expect(await answersPing(ready.redisUrl, 2_000)).toBe(true);
    const client = new Redis(ready.redisUrl);
    expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
    client.disconnect();
    const dashboard = await fetch(`${ready.dashboardUrl}/api/projects`);
    expect(dashboard.status).toBe(200);

    up.kill('SIGTERM');
    const result = await up.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('{"type":"stopped","drained":true}');
    await waitFor('the redis-server child to exit', () => !alive(pid));
    expect(await answersPing(ready.redisUrl, 2_000)).toBe(false);
    expect((await stat(path.join(home, 'redis', 'appendonlydir'))).isDirectory()).toBe(true);
  }, 120_000);

  it('uses the Redis that answers on the probed address instead of starting one', async () => {
    const up = world.start(['up', '--port', '0', '--json'], {
      REDIS_URL: undefined,
      BATON_REDIS_PROBE_URL: REDIS_URL,
    });
    await up.waitForOutput('"type":"ready"', 60_000);
    expect(readyLine(up.stdout())).toMatchObject({ redisSource: 'probe', redisPid: null });
    up.kill('SIGINT');
    expect((await up.done).code).toBe(0);
  }, 120_000);

  it('--json keeps stdout to JSON lines: the worker logs (LOG_LEVEL=info) go to stderr', async () => {
    const up = world.start(['up', '--port', '0', '--json'], { LOG_LEVEL: 'info' });
    await up.waitForOutput('"type":"ready"', 60_000);
    up.kill('SIGINT');
    const result = await up.done;
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual([
      'ready',
      'stopping',
      'stopped',
    ]);
    expect(result.stderr).toContain('"msg":"worker started"');
  }, 120_000);

  it('without a redis-server binary, exits 9 with one line naming the install command', async () => {
    const probe = await closedPort();
    const result = await world.cli(['up', '--port', '0'], {
      REDIS_URL: undefined,
      PATH: path.join(world.dir, 'no-binaries-here'),
      BATON_REDIS_PROBE_URL: `redis://127.0.0.1:${probe}`,
    });
    expect(result.code).toBe(9);
    expect(oneLine(result.stderr)).toBe(
      'baton: no Redis answers and no redis-server binary was found: install one with `apt-get install redis-server` or set REDIS_URL.',
    );
  });

  it('uses REDIS_URL as is: unreachable exits 8 (no fallback), not a URL exits 2', async () => {
    const port = await closedPort();
    const unreachable = await world.cli(['up', '--port', '0'], {
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(unreachable.code).toBe(8);
    expect(oneLine(unreachable.stderr)).toContain(
      `cannot reach Redis at redis://127.0.0.1:${port}`,
    );

    const bad = await world.cli(['up'], { REDIS_URL: 'localhost' });
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toBe('baton: REDIS_URL is not a URL: "localhost".');
  });

  it('a dashboard port in use exits 2 with one line', async () => {
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const result = await world.cli(['up', '--port', String(port)]);
      expect(result.code).toBe(2);
      expect(oneLine(result.stderr)).toContain(`cannot listen on 127.0.0.1:${port}`);
    } finally {
      server.close();
    }
  }, 60_000);

  it('--port out of range is a usage error', async () => {
    const result = await world.cli(['up', '--port', '99999']);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain('expected a port from 0 to 65535');
  });
});
