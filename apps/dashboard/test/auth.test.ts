import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatonControl } from '@baton/projects';
import { REDIS_URL } from '@baton/test-support';
import { createDashboardServer, DashboardError } from '../src/index.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

const TOKEN = 'correct-horse-battery-staple-42';

/** node:http, because fetch will not let a test choose the Host header. */
function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end();
  });
}

/** A browser's top-level navigation (fetch() always says `Sec-Fetch-Mode: cors`). */
function navigate(url: string): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        headers: {
          accept: 'text/html',
          'sec-fetch-mode': 'navigate',
          'sec-fetch-dest': 'document',
          'sec-fetch-site': 'none',
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** POST with node:http, resolving with the status even if the server hangs up mid-upload. */
function rawPost(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', (error) => setTimeout(() => reject(error), 1_000));
    request.end(body);
  });
}

describe('dashboard access control', () => {
  let dashboard: TestDashboard | undefined;

  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
  });

  it('serves loopback without a token', async () => {
    dashboard = await startTestDashboard({ token: '' });
    expect(dashboard.server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await dashboard.request('/api/projects');
    expect(response.status).toBe(200);
  });

  it('refuses to bind a non-loopback address without BATON_DASHBOARD_TOKEN', async () => {
    const control = createBatonControl({ url: REDIS_URL, prefix: '{bd-refuse}' });
    try {
      const previous = process.env.BATON_DASHBOARD_TOKEN;
      delete process.env.BATON_DASHBOARD_TOKEN;
      try {
        const attempt = createDashboardServer({ control, host: '0.0.0.0', port: 0 });
        await expect(attempt).rejects.toBeInstanceOf(DashboardError);
        await expect(attempt).rejects.toMatchObject({ code: 'token_required' });
        await expect(attempt).rejects.toThrow(/BATON_DASHBOARD_TOKEN/);
      } finally {
        if (previous !== undefined) process.env.BATON_DASHBOARD_TOKEN = previous;
      }
      await expect(
        createDashboardServer({ control, host: '0.0.0.0', port: 0, token: 'short' }),
      ).rejects.toMatchObject({
        code: 'invalid_config',
      });
    } finally {
      await control.close();
    }
  });

  it('binds a non-loopback address when a token is set, and then requires it', async () => {
    dashboard = await startTestDashboard({ host: '0.0.0.0', token: TOKEN });
    const url = `http://127.0.0.1:${dashboard.server.port}`;
    expect((await fetch(`${url}/api/projects`)).status).toBe(401);
    expect(
      (
        await fetch(`${url}/api/projects`, {
          headers: { authorization: 'Bearer wrong-token-wrong-token' },
        })
      ).status,
    ).toBe(401);
    expect(
      (await fetch(`${url}/api/projects`, { headers: { authorization: `Bearer ${TOKEN}` } }))
        .status,
    ).toBe(200);
    // Pages redirect to the login form rather than showing a JSON error.
    const page = await navigate(`${url}/`);
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe('/login');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('logs in with a form that sets an HttpOnly SameSite=Strict cookie', async () => {
    dashboard = await startTestDashboard({ token: TOKEN });
    const { server } = dashboard;
    const form = (token: string) =>
      fetch(`${server.url}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
        body: new URLSearchParams({ token }).toString(),
      });

    // The server answers 413 from Content-Length and hangs up before reading the body.
    const huge = await rawPost(`${server.url}/login`, `token=${'x'.repeat(300 * 1024)}`, {
      'content-type': 'application/x-www-form-urlencoded',
      origin: server.url,
    });
    expect(huge).toBe(413);

    const wrong = await form('not-the-token-at-all');
    expect(wrong.status).toBe(303);
    expect(wrong.headers.get('location')).toBe('/login?failed=1');
    expect(wrong.headers.get('set-cookie')).toBeNull();

    const right = await form(TOKEN);
    expect(right.headers.get('location')).toBe('/');
    const cookie = right.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).not.toContain(TOKEN);
    const session = cookie.split(';')[0] ?? '';

    expect(
      (await fetch(`${server.url}/api/projects`, { headers: { cookie: session } })).status,
    ).toBe(200);
    expect(
      (await fetch(`${server.url}/api/projects`, { headers: { cookie: 'baton_dashboard=forged' } }))
        .status,
    ).toBe(401);
  });

  it('accepts state changes only from our own origin (or a bearer client)', async () => {
    dashboard = await startTestDashboard({ token: TOKEN });
    const { server, control } = dashboard;
    await control.createProject({ id: 'csrf-target', goal: 'x\n- y' });
    const login = await fetch(`${server.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: `token=${TOKEN}`,
    });
    const session = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const cancel = (headers: Record<string, string>) =>
      fetch(`${server.url}/api/projects/csrf-target/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      });

    expect((await cancel({ cookie: session, origin: 'http://evil.example' })).status).toBe(403);
    expect((await cancel({ cookie: session, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await cancel({ cookie: session })).status).toBe(403);
    expect((await control.getProject('csrf-target'))?.status).toBe('queued');

    expect((await cancel({ cookie: session, origin: server.url })).status).toBe(200);
    expect((await control.getProject('csrf-target'))?.status).toBe('cancelled');
    // Bearer clients (curl, scripts) send no Origin; browsers never attach a bearer token.
    const resumed = await fetch(`${server.url}/api/projects/csrf-target/resume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(resumed.status).toBe(200);
  });

  it('refuses requests for another Host when no token is set (DNS rebinding)', async () => {
    dashboard = await startTestDashboard({ token: '' });
    const url = `${dashboard.server.url}/api/projects`;
    expect(await rawGet(url, { host: 'evil.example' })).toBe(421);
    expect(await rawGet(url, { host: `localhost:${dashboard.server.port}` })).toBe(200);
  });

  it('sends security headers with a CSP that allows no inline script', async () => {
    dashboard = await startTestDashboard({ token: '' });
    const response = await navigate(`${dashboard.server.url}/`);
    expect(response.status).toBe(200);
    const csp = String(response.headers['content-security-policy'] ?? '');
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    const html = response.body;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
