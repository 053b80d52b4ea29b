/**
 * The error paths of every route, walked from the app's own route table (a route added later is
 * walked too): bad path parameters, bad and unknown query fields, bodies that are not JSON or
 * have unknown fields, projects that do not exist. Every refusal is one line of JSON,
 * `{"error":{"code","message"}}`, whose message names no host path (the workspace root, the
 * fetch cache under BATON_HOME, the checkout) and carries no stack trace.
 */
import { afterEach, expect, it } from 'vitest';
import { randomHex } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { seedRemoteProject } from './support/silent-remote.js';

let dashboard: TestDashboard | undefined;
afterEach(async () => {
  await dashboard?.close();
  dashboard = undefined;
});

/** Routes whose answers are not JSON by design: the pages, the login form, streams, metrics. */
const NOT_JSON = new Set(['/login', '/logout', '/metrics', '/', '/new', '/livez', '/readyz']);

function fill(path: string, values: Record<string, string>): string {
  return path.replace(/:([A-Za-z]+)/gu, (_match, name: string) => values[name] ?? 'x');
}

it('answers every bad request on every API route with one JSON line naming no host path', async () => {
  dashboard = await startTestDashboard({ home: `/tmp/baton-home-${randomHex(3)}` });
  const { app } = dashboard.server;
  // A project whose diff fails (its remote does not exist): the git error names host paths.
  const known = await seedRemoteProject(
    dashboard.repository,
    `audit-${randomHex(3)}`,
    `/nonexistent/${randomHex(3)}/repo.git`,
  );
  const routes = [
    ...new Map(
      app.routes
        .filter((route) => route.method === 'GET' || route.method === 'POST')
        .filter((route) => route.path.startsWith('/api/') && !route.path.includes('*'))
        .map((route) => [`${route.method} ${route.path}`, route] as const),
    ).values(),
  ];
  expect(routes.length).toBeGreaterThan(20);

  const secrets = [dashboard.workspaceRoot, '/tmp/baton-home-', '/nonexistent/', process.cwd()];
  const answered: string[] = [];
  async function expectOneJsonLine(method: string, target: string, init: RequestInit = {}) {
    const response = await dashboard!.request(target, {
      method,
      ...init,
      headers: { origin: dashboard!.server.url, ...(init.headers ?? {}) },
    });
    const label = `${method} ${target} -> ${response.status}`;
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      await response.body?.cancel();
      return;
    }
    const text = await response.text();
    if (response.status < 400) return;
    answered.push(label);
    expect(response.headers.get('content-type'), label).toMatch(/^application\/json/u);
    expect(text.includes('\n'), `${label}: ${text}`).toBe(false);
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    expect(Object.keys(body), label).toEqual(['error']);
    expect(typeof body.error?.code, label).toBe('string');
    expect(typeof body.error?.message, label).toBe('string');
    expect(String(body.error?.message), label).not.toMatch(/\n|\s{2}at |node_modules|\.ts:\d/u);
    for (const secret of secrets) expect(text, `${label} names ${secret}`).not.toContain(secret);
  }

  for (const route of routes) {
    const method = route.method;
    const cases = [
      fill(route.path, { id: 'bad%20id!', sessionId: '..%2F..%2Fetc' }),
      `${fill(route.path, { id: `missing-${randomHex(3)}`, sessionId: 's1' })}?nosuch=1&limit=-5&path=..%2F..&before=x&after=y&q=`,
      `${fill(route.path, { id: known, sessionId: '..%2Fpasswd' })}?path=%2Fetc%2Fpasswd&from=zz&to=zz&limit=abc`,
      fill(route.path, { id: known, sessionId: 'nosuch' }),
    ];
    for (const target of cases) {
      if (NOT_JSON.has(target)) continue;
      if (method === 'GET') {
        await expectOneJsonLine('GET', target);
      } else {
        await expectOneJsonLine('POST', target, {
          headers: { 'content-type': 'application/json' },
          body: '{not json',
        });
        await expectOneJsonLine('POST', target, {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ nosuch: true, id: '../../x', goal: 7, text: '' }),
        });
        await expectOneJsonLine('POST', target, {
          headers: { 'content-type': 'text/plain' },
          body: 'plain',
        });
      }
    }
  }
  // The walk reached the failure answers of most routes, the failing branch diff included.
  expect(answered.length).toBeGreaterThan(routes.length * 2);
  expect(answered.some((label) => label.includes(`/${known}/diff`) && label.endsWith('503'))).toBe(
    true,
  );
  // Unknown API routes and methods answer the same way.
  await expectOneJsonLine('GET', '/api/nosuch');
  await expectOneJsonLine('DELETE', `/api/projects/${known}`);
}, 120_000);
