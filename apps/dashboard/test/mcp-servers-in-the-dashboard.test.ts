/// <reference lib="dom" />
/**
 * MCP servers in the dashboard: the new-project form's MCP field and the control API's `mcp` take
 * the one schema (`@baton/session/mcp-config`) with one-line errors and nothing created; the
 * project page's MCP panel lists the project's servers and, once a real worker ran a session,
 * each server's state, tool count and failure line; no answer and no page carries a `${VAR}`
 * reference's value or the servers' commands.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomHex, waitFor } from '@baton/test-support';
import {
  CHROMIUM,
  chromiumAvailable,
  launchTestBrowser,
  type TestBrowser,
} from './support/browser.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { startSimWorker, type SimWorker } from './support/sim-worker.js';

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
const SECRET = `mcp-secret-${randomHex(6)}`;

const GOOD = {
  mcpServers: {
    everything: {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-everything'],
      env: { SERVICE_TOKEN: '${MCP_DASHBOARD_TOKEN}' },
    },
    broken: { command: 'no-such-mcp-server' },
  },
};

/** Bad configurations and the field each one-line error must name. */
const BAD: Array<[unknown, RegExp]> = [
  [{ mcpServers: { x: { args: ['a'] } } }, /mcp\.mcpServers\.x: must be \{"command"/],
  [{ mcpServers: { a__b: { command: 'x' } } }, /mcp\.mcpServers\.a__b: server names are/],
  [
    { mcpServers: { x: { command: 'x', env: { KEY: `sk-ant-api03-${'a'.repeat(90)}` } } } },
    /mcp\.mcpServers\.x\.env\.KEY: looks like a secret/,
  ],
  [{ mcpServers: { r: { type: 'http', url: 'ftp://x' } } }, /mcp\.mcpServers\.r/],
  [{ servers: {} }, /mcp/],
];

if (!chromiumAvailable) {
  console.warn(
    `MCP dashboard tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`,
  );
}

describe.skipIf(!chromiumAvailable)('MCP servers in the dashboard', () => {
  let dashboard: TestDashboard;
  let worker: SimWorker;
  let browser: TestBrowser;
  let page: Page;
  const previous = process.env.MCP_DASHBOARD_TOKEN;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    // The in-process worker resolves `${MCP_DASHBOARD_TOKEN}` from this process's environment.
    process.env.MCP_DASHBOARD_TOKEN = SECRET;
    dashboard = await startTestDashboard();
    worker = await startSimWorker({
      prefix: dashboard.prefix,
      memoryPrefix: dashboard.memoryPrefix,
    });
    browser = await launchTestBrowser();
    page = browser.page;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await dashboard?.close();
    if (previous === undefined) delete process.env.MCP_DASHBOARD_TOKEN;
    else process.env.MCP_DASHBOARD_TOKEN = previous;
  });

  const url = (pathname: string) => new URL(pathname, dashboard.server.url).toString();
  const post = (body: unknown) =>
    dashboard.request('/api/projects', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard.server.url },
      body: JSON.stringify(body),
    });

  it('the control API refuses a bad mcp field in one JSON line naming the field, and creates nothing', async () => {
    for (const [mcp, expected] of BAD) {
      const id = `mcp-bad-${randomHex(3)}`;
      const response = await post({ id, goal: 'x', mcp });
      const text = await response.text();
      expect(response.status, JSON.stringify(mcp)).toBe(400);
      expect(text.trim().split('\n'), text).toHaveLength(1);
      const body = JSON.parse(text) as { error: { message: string } };
      expect(body.error.message, text).toMatch(expected);
      expect(text).not.toContain('sk-ant-api03');
      expect(await dashboard.control.getProject(id)).toBeNull();
    }
  });

  it('the form and the project page: servers, their state, tool count and failure line, no values', async () => {
    const id = `mcp-ui-${randomHex(3)}`;
    await page.goto(url('/new'));
    await page.fill('input[name=id]', id);
    await page.fill(
      'textarea[name=goal]',
      'Echo through MCP.\n- Echo [sim:mcp mcp__everything__echo {"message":"F1 ok"}] [sim:mcp-expect F1 ok]',
    );
    const message = page.locator('.form-message');
    const submit = () => page.click('[data-testid=create-form] button[type=submit]');
    // Not JSON: refused in the page, nothing sent.
    await page.fill('textarea[name=mcp]', '{ not json');
    await submit();
    await page.waitForFunction(() => document.querySelector('.form-message')?.textContent !== '');
    expect(await message.textContent()).toBe('mcp: is not valid JSON');
    // Valid JSON, a bad server: the server's one line, as the control API says it.
    await page.fill('textarea[name=mcp]', JSON.stringify(BAD[0]![0]));
    await submit();
    await page.waitForFunction(() =>
      /mcpServers/.test(document.querySelector('.form-message')?.textContent ?? ''),
    );
    expect(await message.textContent()).toMatch(BAD[0]![1]);
    expect((await message.textContent())?.split('\n')).toHaveLength(1);
    expect(await dashboard.control.getProject(id)).toBeNull();

    await page.fill('textarea[name=mcp]', JSON.stringify(GOOD, null, 2));
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-mcp-form.png'), fullPage: true });
    await submit();
    await page.waitForURL(`**/projects/${id}`);
    // Stored as written: the reference, not its value.
    expect((await dashboard.control.getProject(id))?.mcp).toEqual(GOOD);

    const panel = '[data-testid=mcp-servers]';
    await page.waitForSelector(`${panel} li[data-server=everything][data-state=ready]`, {
      timeout: 90_000,
    });
    await page.waitForSelector(`${panel} li[data-server=broken][data-state=failed]`);
    const everything = await page.textContent(`${panel} li[data-server=everything]`);
    expect(everything).toMatch(/^everything \(project, stdio\): ready · \d+ tools$/);
    const broken = await page.textContent(`${panel} li[data-server=broken]`);
    expect(broken).toMatch(/^broken \(project, stdio\): failedMCP server broken is unavailable: /);
    await page.screenshot({
      path: path.join(ARTIFACTS, 'dashboard-mcp-panel.png'),
      fullPage: true,
    });

    // After the session: the same from the session summaries, through the HTTP API.
    const detail = await waitFor(
      'a session summary with MCP states',
      async () => {
        const body = (await (await dashboard.request(`/api/projects/${id}`)).json()) as {
          project: { mcpServers: unknown };
          sessions: Array<{ mcp?: Array<{ server: string; state: string; tools: number }> }>;
        };
        return body.sessions.some((session) => (session.mcp ?? []).length > 0) ? body : null;
      },
      90_000,
    );
    expect(detail.project.mcpServers).toEqual([
      { name: 'everything', type: 'stdio' },
      { name: 'broken', type: 'stdio' },
    ]);
    const states = detail.sessions.flatMap((session) => session.mcp ?? []);
    expect(states.find((state) => state.server === 'everything')).toMatchObject({ state: 'ready' });
    expect(states.find((state) => state.server === 'broken')).toMatchObject({ state: 'failed' });
    // A reload shows the same from the summaries (no live events needed), once no session runs
    // (the panel shows a running session's own states; the resume session may start at once).
    await waitFor(
      'no session of the project to be running',
      async () => {
        const status = (await dashboard.control.getProject(id))?.status;
        return status !== undefined && status !== 'queued' && status !== 'running' ? status : null;
      },
      120_000,
    );
    await page.reload();
    await page.waitForSelector(`${panel} li[data-server=everything][data-state=ready]`);
    expect(await page.textContent(panel)).toMatch(/^In session \d+:/);

    // Never a value, a reference or a command, in the page or in the API's answers.
    const answers = [
      await (await dashboard.request(`/api/projects/${id}`)).text(),
      await (await dashboard.request('/api/projects')).text(),
      await page.content(),
    ].join('\n');
    expect(answers).not.toContain(SECRET);
    expect(answers).not.toContain('MCP_DASHBOARD_TOKEN');
    expect(answers).not.toContain('server-everything');
  }, 180_000);
});
