/// <reference lib="dom" />
/**
 * A page on another local origin, in real Chromium, tries everything a page can do to a
 * dashboard that runs without a token on loopback: lists, a branch diff (a real `git fetch`), an
 * event stream, an image, a frame, a POST. Each request reaches the server (the access log shows
 * it) and each is answered 403; no diff fetch starts and no stream opens. The dashboard's own
 * page, opened in the same browser, still works.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { randomHex } from '@baton/test-support';
import {
  CHROMIUM,
  chromiumAvailable,
  launchTestBrowser,
  type TestBrowser,
} from './support/browser.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

if (!chromiumAvailable)
  console.warn(`cross-origin browser test skipped: no Chromium at ${CHROMIUM}`);

/** GET with exactly these fetch-metadata headers (fetch() would set its own Sec-Fetch-Mode). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; type: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers }, (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'] ?? '' });
    });
    request.on('error', reject);
    request.end();
  });
}

interface AccessLine {
  method: string;
  path: string;
  status: number;
}

/** The attacker's page: every kind of request a page can make, then `window.__done`. */
function attackerPage(dashboardUrl: string, projectId: string): string {
  const target = JSON.stringify(dashboardUrl);
  const project = JSON.stringify(projectId);
  return `<!doctype html><html><body><script>
const D = ${target};
const P = ${project};
const waitFor = (element) => new Promise((resolve) => { element.onload = element.onerror = resolve; });
(async () => {
  const tries = [
    fetch(D + '/api/projects?limit=500', { mode: 'no-cors' }),
    fetch(D + '/api/projects?limit=500'),
    fetch(D + '/api/projects/' + P + '/diff', { mode: 'no-cors' }),
    fetch(D + '/api/projects/' + P + '/diff?stat=1', { mode: 'no-cors', credentials: 'include' }),
    fetch(D + '/api/projects/' + P, { mode: 'no-cors' }),
    fetch(D + '/livez', { mode: 'no-cors' }),
    fetch(D + '/', { mode: 'no-cors' }),
    fetch(D + '/api/projects', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"id":"pwned","goal":"- x"}' }),
  ].map((attempt) => attempt.catch(() => null));
  await Promise.all(tries);
  for (const path of ['/api/stream', '/api/projects/' + P + '/stream']) {
    await new Promise((resolve) => {
      const source = new EventSource(D + path);
      source.onerror = () => { source.close(); resolve(); };
      source.onopen = () => { window.__streamOpened = true; };
    });
  }
  const image = new Image();
  image.src = D + '/api/projects/' + P + '/diff?img=1';
  await waitFor(image);
  const frame = document.createElement('iframe');
  frame.src = D + '/projects/' + P;
  document.body.append(frame);
  await waitFor(frame);
  const script = document.createElement('script');
  script.src = D + '/assets/app.js';
  document.body.append(script);
  await waitFor(script);
  window.__done = true;
})();
</script></body></html>`;
}

describe.skipIf(!chromiumAvailable)('a page on another local origin', () => {
  let dashboard: TestDashboard;
  let browser: TestBrowser;
  let attacker: Server;
  let attackerPort: number;
  const access: AccessLine[] = [];
  const projectId = `target-${randomHex(3)}`;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (line.trim() === '') continue;
          const entry = JSON.parse(line) as { msg?: string } & AccessLine;
          if (entry.msg === 'request') access.push(entry);
        }
        callback();
      },
    });
    dashboard = await startTestDashboard({ logger: pino({ level: 'info' }, sink) });
    await dashboard.control.createProject({ id: projectId, goal: 'Be a target\n- one' });
    attacker = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(attackerPage(dashboard.server.url, projectId));
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerPort = (attacker.address() as AddressInfo).port;
    browser = await launchTestBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await dashboard?.close();
  });

  async function metric(name: string): Promise<number> {
    const text = await (await dashboard.request('/metrics')).text();
    const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
    return Number(line?.split(' ')[1] ?? 'NaN');
  }

  // 127.0.0.1:<other port> is the same site (ports do not count); localhost is another site.
  for (const [label, host] of [
    ['same-site (127.0.0.1, another port)', '127.0.0.1'],
    ['cross-site (localhost)', 'localhost'],
  ] as const) {
    it(`gets 403 for every request it makes, GETs and streams included: ${label}`, async () => {
      access.length = 0;
      const page = browser.page;
      await page.goto(`http://${host}:${attackerPort}/`);
      await page.waitForFunction(() => (window as unknown as { __done?: boolean }).__done, null, {
        timeout: 30_000,
      });
      expect(
        await page.evaluate(
          () => (window as unknown as { __streamOpened?: boolean }).__streamOpened,
        ),
      ).toBeUndefined();
      const fromAttacker = access.filter((line) => line.path !== '/metrics');
      // Everything the page tried arrived (so the test can see a leak) and was refused.
      const paths = new Set(fromAttacker.map((line) => line.path));
      for (const expected of [
        '/api/projects',
        `/api/projects/${projectId}/diff`,
        `/api/projects/${projectId}`,
        '/livez',
        '/',
        '/api/stream',
        `/api/projects/${projectId}/stream`,
        `/projects/${projectId}`,
        '/assets/app.js',
      ]) {
        expect(paths, expected).toContain(expected);
      }
      expect(fromAttacker.filter((line) => line.status !== 403)).toEqual([]);
      expect(await metric('baton_dashboard_diff_fetches_total')).toBe(0);
      expect(await dashboard.control.getProject('pwned')).toBeNull();
    }, 60_000);
  }

  it('leaves the dashboard working for its own page in the same browser', async () => {
    const page = browser.page;
    await page.goto(dashboard.server.url);
    await page.waitForSelector(`tr[data-project="${projectId}"]`, { timeout: 20_000 });
  }, 30_000);

  it('serves the UI shell to top-level navigations only', async () => {
    const page = `${dashboard.server.url}/projects/${projectId}`;
    const asFetch = await rawGet(`${dashboard.server.url}/`, {
      'sec-fetch-mode': 'cors',
      'sec-fetch-dest': 'empty',
      'sec-fetch-site': 'same-origin',
    });
    expect(asFetch.status).toBe(403);
    const framed = await rawGet(page, {
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'iframe',
      'sec-fetch-site': 'same-origin',
    });
    expect(framed.status).toBe(403);
    // A link from another site opens the page (a static file); the page's own requests are then
    // same-origin.
    const linked = await rawGet(page, {
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
      'sec-fetch-site': 'cross-site',
    });
    expect(linked).toEqual({ status: 200, type: expect.stringMatching(/text\/html/) });
  });
});
