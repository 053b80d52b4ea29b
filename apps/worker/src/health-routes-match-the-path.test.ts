import { Registry } from 'prom-client';
import { afterEach, expect, it } from 'vitest';
import { startWorkerHttpServer, type WorkerHttpServer } from './http-server.js';

let server: WorkerHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it('health and metrics routes are matched by path: a query string does not make them 404', async () => {
  server = await startWorkerHttpServer({
    registry: new Registry(),
    healthy: () => true,
    port: 0,
    host: '127.0.0.1',
  });
  const status = async (path: string) =>
    (await fetch(`http://127.0.0.1:${server?.port}${path}`)).status;
  for (const path of ['/livez', '/readyz', '/healthz', '/metrics']) {
    expect(await status(path), path).toBe(200);
    expect(await status(`${path}?verbose=1`), `${path}?verbose=1`).toBe(200);
    expect(await status(`${path}?`), `${path}?`).toBe(200);
  }
  expect(await status('/livez/extra')).toBe(404);
  expect(await status('/nope?livez')).toBe(404);
});
