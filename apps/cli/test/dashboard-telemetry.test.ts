import { startRedisServer, waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import type { CliProcess } from './helpers.js';
import { redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

async function readyDashboard(dashboard: CliProcess): Promise<string> {
  await dashboard.waitForOutput('"ready"');
  return (JSON.parse(dashboard.stdout().split('\n')[0] ?? '') as { url: string }).url;
}

/** The JSON lines `baton dashboard` logged on stderr. */
function logLines(dashboard: CliProcess): Record<string, unknown>[] {
  return dashboard
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function sample(metrics: string, name: string, labels: string): number | undefined {
  const line = metrics.split('\n').find((entry) => entry.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('baton dashboard: probes, metrics and logs', () => {
  it('serves /livez, /readyz, /metrics by route and SSE clients, and an access log at LOG_LEVEL', async () => {
    const { redis } = world;
    const id = redis.projectId('tele');
    await redis.control.createProject({ id, goal: 'Watch me\n- one thing' });
    const dashboard = world.start(['dashboard', '--port', '0', '--json'], { LOG_LEVEL: 'info' });
    const url = await readyDashboard(dashboard);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    for (let index = 0; index < 3; index++)
      expect((await fetch(`${url}/api/projects`)).status).toBe(200);
    expect((await fetch(`${url}/api/projects/${id}`)).status).toBe(200);
    expect((await fetch(`${url}/api/projects/absent-project`)).status).toBe(404);

    const stream = new AbortController();
    const sse = await fetch(`${url}/api/stream`, { signal: stream.signal });
    const reader = sse.body!.getReader();
    await reader.read();
    const open = await (await fetch(`${url}/metrics`)).text();
    expect(
      sample(
        open,
        'baton_dashboard_http_requests_total',
        'method="GET",route="/api/projects",status="200"',
      ),
    ).toBe(3);
    expect(
      sample(
        open,
        'baton_dashboard_http_requests_total',
        'method="GET",route="/api/projects/:id",status="404"',
      ),
    ).toBe(1);
    expect(
      sample(
        open,
        'baton_dashboard_http_request_duration_seconds_count',
        'method="GET",route="/api/projects"',
      ),
    ).toBe(3);
    expect(sample(open, 'baton_dashboard_sse_clients', 'stream="projects"')).toBe(1);
    stream.abort();
    await waitFor('the SSE client to be counted out', async () => {
      const metrics = await (await fetch(`${url}/metrics`)).text();
      return sample(metrics, 'baton_dashboard_sse_clients', 'stream="projects"') === 0;
    });

    const access = logLines(dashboard).filter((line) => line.msg === 'request');
    expect(access).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          method: 'GET',
          path: `/api/projects/${id}`,
          route: '/api/projects/:id',
          status: 200,
          durationMs: expect.any(Number),
        }),
      ]),
    );
    dashboard.kill('SIGTERM');
    await dashboard.done;

    // LOG_LEVEL=warn: the same requests write no access lines.
    const quiet = world.start(['dashboard', '--port', '0', '--json'], { LOG_LEVEL: 'warn' });
    expect((await fetch(`${await readyDashboard(quiet)}/api/projects`)).status).toBe(200);
    quiet.kill('SIGTERM');
    await quiet.done;
    expect(logLines(quiet).filter((line) => line.msg === 'request')).toEqual([]);

    const bad = world.start(['dashboard', '--port', '0'], { LOG_LEVEL: 'verbose' });
    const refused = await bad.done;
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('LOG_LEVEL must be one of');
  });

  it('keeps /livez at 200 while Redis is down; /readyz answers 503 and recovers', async () => {
    const redis = await startRedisServer();
    world.closeAfter({ close: () => redis.stop() });
    const dashboard = world.start(['dashboard', '--port', '0', '--json'], {
      REDIS_URL: redis.url,
      LOG_LEVEL: 'warn',
    });
    const url = await readyDashboard(dashboard);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    await redis.kill('SIGKILL');
    const down = await fetch(`${url}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({
      status: 'unavailable',
      message: 'Redis is unreachable.',
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(503);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    await redis.restart();
    await waitFor('readyz to recover', async () => (await fetch(`${url}/readyz`)).ok);
  });
});
