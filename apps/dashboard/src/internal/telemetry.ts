/**
 * The dashboard's metrics and access log: one Hono middleware records every request's count and
 * latency by route pattern (never the raw path, so ids do not explode the label set), and SSE
 * streams report their clients.
 */
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

type SseStreamKind = 'projects' | 'project';

export interface DashboardTelemetry {
  registry: Registry;
  /** Counts and times every request, and writes one access-log line per request. */
  middleware: MiddlewareHandler;
  /** An SSE client connected (+1) or left (-1). */
  sseClient(change: 1 | -1, stream: SseStreamKind): void;
  /** A branch diff started its `git fetch`. */
  diffFetch(): void;
  /** A branch diff request started (+1) or answered (-1). */
  diffRequest(change: 1 | -1): void;
}

export function createDashboardTelemetry(options: {
  logger: Logger;
  registry?: Registry | undefined;
}): DashboardTelemetry {
  const registry = options.registry ?? new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'baton_dashboard_process_' });
  const requests = new Counter({
    name: 'baton_dashboard_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'baton_dashboard_http_request_duration_seconds',
    help: 'Time to the response headers, by method and route pattern (SSE: until the stream opens).',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const sseClients = new Gauge({
    name: 'baton_dashboard_sse_clients',
    help: 'Server-Sent Events clients connected now, by stream.',
    labelNames: ['stream'] as const,
    registers: [registry],
  });
  const diffFetches = new Counter({
    name: 'baton_dashboard_diff_fetches_total',
    help: 'Branch diffs that ran a git fetch (concurrent requests for one project share one).',
    registers: [registry],
  });
  const diffRequests = new Gauge({
    name: 'baton_dashboard_diff_requests_in_progress',
    help: 'Branch diff requests being answered now (waiting for their fetch included).',
    registers: [registry],
  });
  sseClients.set({ stream: 'projects' }, 0);
  sseClients.set({ stream: 'project' }, 0);

  const middleware: MiddlewareHandler = async (context, next) => {
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    const matched = routePath(context);
    // A request no route took (the global middleware is all that ran) gets one label.
    const route = matched === '*' || matched === '/*' ? 'unmatched' : matched;
    const method = context.req.method;
    const status = context.res.status;
    requests.inc({ method, route, status: String(status) });
    duration.observe({ method, route }, seconds);
    options.logger.info(
      {
        method,
        path: context.req.path,
        route,
        status,
        durationMs: Math.round(seconds * 10_000) / 10,
      },
      'request',
    );
  };

  return {
    registry,
    middleware,
    sseClient(change, stream) {
      sseClients.inc({ stream }, change);
    },
    diffFetch() {
      diffFetches.inc();
    },
    diffRequest(change) {
      diffRequests.inc(change);
    },
  };
}
