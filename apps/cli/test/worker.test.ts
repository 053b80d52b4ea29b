import { describe, expect, it } from 'vitest';
import { startCli } from './helpers.js';
import { closedPort, oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton worker', () => {
  it('refuses to start without an API key or simulator, or with a bad REDIS_URL, in one line each', async () => {
    const noKey = await world.cli(['worker']);
    expect(noKey.code).toBe(2);
    expect(oneLine(noKey.stderr)).toContain('ANTHROPIC_API_KEY is not set');
    const badUrl = await world.cli(['worker'], { BATON_MODEL: 'sim', REDIS_URL: 'http://x' });
    expect(badUrl.code).toBe(2);
    expect(oneLine(badUrl.stderr)).toContain('REDIS_URL must start with redis://');
    const port = await closedPort();
    const down = await world.cli(['worker', '--port', '0'], {
      BATON_MODEL: 'sim',
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(down.code).toBe(8);
    expect(oneLine(down.stderr)).toContain('cannot reach Redis');
  });

  it('runs a queued project to completion on the built-in simulator and drains on SIGTERM', async () => {
    const { redis } = world;
    const worker = startCli(['worker', '--port', '0', '--concurrency', '2'], {
      cwd: world.dir,
      env: redis.env(world.dir, { BATON_MODEL: 'sim', BATON_CHAIN_DELAY_MS: '0' }),
    });
    try {
      await worker.waitForOutput('"worker started"');
      const id = redis.projectId('wk');
      const enqueued = await world.cli(['enqueue', '--project', id, '--goal', 'Greet\n- hello']);
      expect(enqueued.code).toBe(0);
      const deadline = Date.now() + 40_000;
      let status = '';
      while (Date.now() < deadline) {
        const result = await world.cli(['status', id, '--json']);
        status = (JSON.parse(result.stdout) as { status: string }).status;
        if (status === 'completed' || status === 'failed') break;
      }
      expect(status).toBe('completed');
    } finally {
      worker.kill('SIGTERM');
    }
    const exit = await worker.done;
    expect(exit.code).toBe(0);
    expect(worker.stdout()).toContain('"worker closed"');
  });
});
