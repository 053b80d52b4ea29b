import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface WorkerHttpServerOptions {
  registry: Registry;
  /** True while the worker takes jobs and Redis answers (`/readyz`). */
  healthy: () => boolean;
  /** Why the worker is not ready, shown in `/readyz`'s body (e.g. Redis may evict keys). */
  notReadyReason?: (() => string | undefined) | undefined;
  port: number;
  host: string;
}

export interface WorkerHttpServer {
  server: Server;
  /** The port actually bound (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * `/livez`: 200 whenever the process answers at all, Redis up or down, so a liveness probe never
 * restarts every worker during a Redis outage (BullMQ reconnects by itself). `/readyz`: 200 while
 * the worker takes jobs and Redis answers, else 503. `/healthz` is `/readyz` under its older
 * name. `/metrics`: Prometheus text.
 */
export async function startWorkerHttpServer(
  options: WorkerHttpServerOptions,
): Promise<WorkerHttpServer> {
  const server = createServer((request, response) => {
    // Routes match the path only: probes and scrapers may add a query string (`/readyz?verbose`).
    const url = new URL(request.url ?? '/', 'http://worker.invalid').pathname;
    if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    if (url === '/livez') {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'ok', uptimeSeconds: Math.round(process.uptime()) }));
      return;
    }
    if (url === '/readyz' || url === '/healthz') {
      const ok = options.healthy();
      const reason = ok ? undefined : options.notReadyReason?.();
      response
        .writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            reason === undefined
              ? { status: ok ? 'ok' : 'unhealthy' }
              : { status: 'unhealthy', reason },
          ),
        );
      return;
    }
    if (url === '/metrics') {
      options.registry
        .metrics()
        .then((text) => {
          response.writeHead(200, { 'content-type': options.registry.contentType }).end(text);
        })
        .catch((error: unknown) => {
          response.writeHead(500).end(error instanceof Error ? error.message : 'metrics failed');
        });
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
