import { describe, expect, it } from 'vitest';
import { waitFor } from '@baton/test-support';
import { privateRedisOf, simWorld } from './support/sim-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

async function probe(port: number, path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.json() };
}

describe('worker health probes', () => {
  const world = simWorld({ privateRedis: true });

  it('/livez stays 200 while Redis is down; /readyz and its alias /healthz go 503 and come back', async () => {
    const { sim, prefix, url } = world;
    const redis = privateRedisOf(world);
    // Credentials in a URL the worker logs: the log line must not carry them.
    const simUrl = sim.url.replace('http://', 'http://baton:s3cret-in-url@');
    const worker = world.closeAfter(
      await spawnWorker(
        simWorkerEnv({ prefix, simUrl, redisUrl: url }, { BATON_MODEL: 'sim', LOG_LEVEL: 'debug' }),
      ),
    );
    const port = worker.httpPort;
    expect(await probe(port, '/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await probe(port, '/readyz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await probe(port, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });

    await redis.kill('SIGKILL');
    await waitFor('readyz to report Redis down', async () => {
      return (await probe(port, '/readyz')).status === 503;
    });
    expect(await probe(port, '/healthz')).toEqual({ status: 503, body: { status: 'unhealthy' } });
    // A liveness probe must not restart a worker that is only waiting for Redis.
    expect(await probe(port, '/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });

    // The connection errors meanwhile are logged at debug level with their stack.
    const connectionError = await worker.waitForLog(
      (line) => line.msg === 'redis connection error',
    );
    expect(connectionError.err).toMatchObject({ message: expect.any(String) });
    expect((connectionError.err as { stack?: string }).stack).toMatch(/\n\s+at /u);
    const simulatorLine = await worker.waitForLog((line) =>
      String(line.msg).includes('using the model simulator'),
    );
    expect(JSON.stringify(simulatorLine)).toContain('[REDACTED:url_credentials]');
    expect(JSON.stringify(worker.logs)).not.toContain('s3cret-in-url');

    await redis.restart();
    await waitFor('readyz to recover', async () => (await probe(port, '/readyz')).status === 200);
    expect(await probe(port, '/livez')).toMatchObject({ status: 200 });
  });
});
