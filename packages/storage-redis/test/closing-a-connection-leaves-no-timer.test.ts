import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Runs `body` in a fresh node process (the package's source through tsx) and returns what it
 * printed. The process must exit on its own: anything left holding the event loop would keep it
 * (and this test) waiting.
 */
async function inChild(body: string): Promise<unknown> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--conditions=@baton/source',
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import * as redis from '@baton/storage-redis';
       const settled = () => new Promise((resolve) => setImmediate(resolve));
       ${body}`,
    ],
    { cwd: packageDir, timeout: 20_000 },
  );
  return JSON.parse(stdout) as unknown;
}

describe('closeRedisConnection', () => {
  it('destroys a connection that never became ready: nothing is left waiting', async () => {
    const port = await closedPort();
    const result = await inChild(`
      const client = redis.createRedisConnection(
        { kind: 'single', url: 'redis://127.0.0.1:${port}' },
        redis.workerConnectionOptions(),
      );
      client.on('error', () => undefined);
      // The worker's path: wait, give up, close. ioredis is then between reconnect attempts.
      const waited = await redis.waitForRedis(client, 300).then(() => 'ready', (error) => error.message);
      const before = client.status;
      redis.closeRedisConnection(client);
      await settled();
      process.stdout.write(JSON.stringify({ waited, before, left: process.getActiveResourcesInfo() }));
    `);
    expect(result).toEqual({
      waited: expect.stringContaining('ECONNREFUSED') as unknown,
      before: 'reconnecting',
      left: expect.not.arrayContaining(['Timeout']) as unknown,
    });
  });

  it('closes a ready connection and the process still exits on its own', async () => {
    const result = await inChild(`
      const client = redis.createRedisConnection(
        { kind: 'single', url: 'redis://127.0.0.1:6379' },
        redis.workerConnectionOptions(),
      );
      await redis.waitForRedis(client, 5000);
      const pong = await client.ping();
      redis.closeRedisConnection(client);
      await new Promise((resolve) => client.once('end', resolve));
      process.stdout.write(JSON.stringify({ pong, after: client.status }));
    `);
    expect(result).toEqual({ pong: 'PONG', after: 'end' });
  });

  it('a memory store closes its own connection that never became ready without waiting', async () => {
    const port = await closedPort();
    const result = await inChild(`
      const store = redis.createRedisMemoryStore({ namespace: 'close-test', url: 'redis://127.0.0.1:${port}', redisOptions: { retryStrategy: () => 50 } });
      const read = await store.usage().then(() => 'read', (error) => error.code);
      await store.close();
      await settled();
      process.stdout.write(JSON.stringify({ read, left: process.getActiveResourcesInfo() }));
    `);
    expect(result).toEqual({
      read: 'unavailable',
      left: expect.not.arrayContaining(['Timeout']) as unknown,
    });
  });

  it('answersPing against a closed port answers false and leaves nothing waiting', async () => {
    const port = await closedPort();
    const result = await inChild(`
      const answered = await redis.answersPing({ kind: 'single', url: 'redis://127.0.0.1:${port}' }, 2000);
      await settled();
      process.stdout.write(JSON.stringify({ answered, left: process.getActiveResourcesInfo() }));
    `);
    expect(result).toEqual({
      answered: false,
      left: expect.not.arrayContaining(['Timeout']) as unknown,
    });
  });
});
