import { get } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startCli } from './helpers.js';
import { closedPort, oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

/** The `{ "type": "ready", "url": ... }` line `baton dashboard --json` prints once listening. */
function readyUrl(stdout: string): string | undefined {
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as { type?: string; url?: string };
    if (parsed.type === 'ready') return parsed.url;
  }
  return undefined;
}

/** Opens `url` as a browser's address bar does (fetch() says `Sec-Fetch-Mode: cors`, which the shell refuses). */
function navigate(url: string): Promise<{ status: number; type: string }> {
  return new Promise((resolve, reject) => {
    get(
      url,
      { headers: { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' } },
      (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'] ?? '' });
      },
    ).on('error', reject);
  });
}

describe('baton dashboard', () => {
  it('serves the projects of its Redis prefix until SIGTERM, then says it stopped and exits 0', async () => {
    const { redis } = world;
    const id = redis.projectId('dash');
    await redis.control.createProject({ id, goal: 'Watch me\n- one thing' });
    const dashboard = startCli(['dashboard', '--port', '0', '--json'], {
      cwd: world.dir,
      env: redis.env(world.dir),
    });
    try {
      await dashboard.waitForOutput('"ready"');
      const url = readyUrl(dashboard.stdout());
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/u);
      const response = await fetch(`${url}/api/projects`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { projects: Array<{ id: string; status: string }> };
      expect(body.projects.map((project) => project.id)).toEqual([id]);
      expect(body.projects[0]?.status).toBe('queued');
      const page = await navigate(`${url}/`);
      expect(page.status).toBe(200);
      expect(page.type).toContain('text/html');
    } finally {
      dashboard.kill('SIGTERM');
    }
    const exit = await dashboard.done;
    expect(exit.code).toBe(0);
    expect(dashboard.stdout()).toContain('{"type":"stopped"}');
  });

  it('BATON_DASHBOARD_SECURE_COOKIE=on marks the login cookie Secure (behind a TLS proxy); off by default; a bad value is one line, exit 2', async () => {
    const { redis } = world;
    const token = 'Vq3xT9mLp2Rk8sWz4nYb7cHd';
    async function loginCookie(secure: string | undefined): Promise<string> {
      const dashboard = startCli(['dashboard', '--port', '0', '--json'], {
        cwd: world.dir,
        env: redis.env(world.dir, {
          BATON_DASHBOARD_TOKEN: token,
          BATON_DASHBOARD_SECURE_COOKIE: secure,
        }),
      });
      try {
        await dashboard.waitForOutput('"ready"', 60_000);
        const url = readyUrl(dashboard.stdout()) ?? '';
        const response = await fetch(`${url}/login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
          body: new URLSearchParams({ token }).toString(),
        });
        expect(response.status).toBe(303);
        return response.headers.get('set-cookie') ?? '';
      } finally {
        dashboard.kill('SIGTERM');
        await dashboard.done;
      }
    }
    const secure = await loginCookie('on');
    expect(secure).toMatch(/^baton_dashboard=/u);
    expect(secure).toMatch(/;\s*Secure/iu);
    const plain = await loginCookie(undefined);
    expect(plain).toMatch(/^baton_dashboard=/u);
    expect(plain).not.toMatch(/Secure/iu);
    const bad = await world.cli(['dashboard', '--port', '0'], {
      BATON_DASHBOARD_SECURE_COOKIE: 'maybe',
    });
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toBe(
      'baton: BATON_DASHBOARD_SECURE_COOKIE must be on or off (true/false, 1/0), not "maybe".',
    );
  }, 120_000);

  it('refuses a non-loopback bind without BATON_DASHBOARD_TOKEN, and an unreachable Redis, in one line each', async () => {
    const open = await world.cli(['dashboard', '--host', '0.0.0.0', '--port', '0'], {
      BATON_DASHBOARD_TOKEN: undefined,
    });
    expect(open.code).toBe(2);
    expect(oneLine(open.stderr)).toContain('BATON_DASHBOARD_TOKEN');
    const port = await closedPort();
    const down = await world.cli(['dashboard', '--port', '0'], {
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(down.code).toBe(8);
    expect(oneLine(down.stderr)).toContain('cannot reach Redis');
  });
});
