/// <reference lib="dom" />
/**
 * The session page in Debian's /usr/bin/chromium (playwright-core): a transcript whose prompt,
 * guidance, model text, tool call and tool result are all hostile renders as a conversation
 * without running any of it, linked from the project page, and the project page's search box
 * finds text in transcripts and memory.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomHex } from '@baton/test-support';
import {
  activeContent,
  chromiumAvailable,
  INERT,
  launchTestBrowser,
  type TestBrowser,
} from './support/browser.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { seedSession } from './support/seed.js';
import { seedHostileTranscript } from './support/seed-transcript.js';

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));

describe.skipIf(!chromiumAvailable)('the session page in a real browser', () => {
  let dashboard: TestDashboard;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    dashboard = await startTestDashboard();
    browser = await launchTestBrowser();
    page = browser.page;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
  });

  const url = (pathname: string) => new URL(pathname, dashboard.server.url).toString();

  it('opens from the session table, shows the conversation with collapsible tool calls, and runs none of a hostile transcript', async () => {
    const id = `tx-${randomHex(3)}`;
    await dashboard.control.createProject({ id, goal: 'Hostile\n- one' });
    await seedSession(dashboard.repository, id, {
      sessionId: 'hs-1',
      sessionNumber: 1,
      kind: 'init',
      turns: [{ input: 900 }, { input: 900 }],
    });
    await seedHostileTranscript(dashboard.repository, id, 'hs-1');

    await page.goto(url(`/projects/${id}`));
    await page.click('[data-testid=session-link]');

    await page.waitForURL(`**/projects/${id}/sessions/hs-1`);
    await page.waitForSelector('[data-testid=transcript]');
    await page.waitForSelector('[data-testid=transcript] [data-testid=model-text] h1');

    const messages = page.locator('[data-testid=transcript] > li');
    expect(await messages.count()).toBe(4);
    expect(await messages.nth(1).getAttribute('data-role')).toBe('assistant');
    // Tool calls and results start collapsed and open on a click.
    const call = page.locator('[data-testid=tool-call]');
    expect(await call.getAttribute('open')).toBeNull();
    await call.locator('summary').click();
    expect(await call.getAttribute('open')).not.toBeNull();
    expect(await call.locator('pre').textContent()).toContain(
      '<script>window.__pwned = 102</script>',
    );
    const result = page.locator('[data-testid=tool-result]');
    expect(await result.locator('summary').textContent()).toContain(
      'Result of bash · ok · cut: 8,000 of 8,010 characters kept',
    );
    // Open every collapsible, hover every link: nothing may run.
    // (`all()` gives positional locators: the set shrinks as each opens, so take the first each time.)
    const closed = page.locator('#main details:not([open]) > summary');
    while ((await closed.count()) > 0) await closed.first().click();
    for (const link of await page.locator('#main a').all()) await link.hover();
    expect(await page.textContent('[data-testid=transcript-guidance]')).toContain(
      '<img src=x onerror="window.__pwned = 101">',
    );
    expect(await page.textContent('[data-testid=context-edit]')).toContain(
      'cleared 1 tool uses (700 input tokens)',
    );
    expect(await activeContent(page)).toEqual(INERT);
    // Shown as text, so a reader sees what the agent and its commands wrote.
    expect(await page.textContent('[data-testid=tool-result] pre')).toContain(
      '<script>window.__pwned = 1</script>',
    );
    expect(await page.textContent('[data-testid=model-text]')).toContain(
      '<script>window.__pwned = 1</script>',
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-session.png'), fullPage: true });
    expect(browser.pageErrors).toEqual([]);
  }, 90_000);

  it('finds text in transcripts and memory from the project page search box', async () => {
    const id = `sx-${randomHex(3)}`;
    await dashboard.control.createProject({ id, goal: 'Search\n- one' });
    await seedHostileTranscript(dashboard.repository, id, 'hs-2');
    const store = await dashboard.control.memoryStore(id);
    await store.write('notes.md', 'the needle-in-memory <img src=x onerror="window.__pwned=7">\n', {
      mode: 'create',
    });
    await page.goto(url(`/projects/${id}`));
    await page.fill('[data-testid=search-text]', 'needle-in');
    await page.press('[data-testid=search-text]', 'Enter');
    await page.waitForSelector('[data-testid=search-hits] li[data-source=transcript]');
    const hits = page.locator('[data-testid=search-hits] li');
    expect(await hits.count()).toBe(2);
    expect(await hits.nth(0).textContent()).toContain('/memories/notes.md:1');
    expect(await hits.nth(0).textContent()).toContain('<img src=x onerror=');
    // A refusal clears the hits and shows one error line; the button works again afterwards.
    await page.fill('[data-testid=search-text]', '   ');
    await page.press('[data-testid=search-text]', 'Enter');
    await page.waitForSelector('.search-box + .action-message.error');
    expect(await page.textContent('.search-box + .action-message')).toContain('must not be empty');
    expect(await hits.count()).toBe(0);
    expect(await page.isEnabled('.search-box button[type=submit]')).toBe(true);
    await page.fill('[data-testid=search-text]', 'needle-in');
    await page.click('.search-box button[type=submit]');
    await page.waitForSelector('[data-testid=search-hits] li[data-source=transcript]');
    expect(await page.$('.search-box + .action-message.error')).toBeNull();
    const link = hits.nth(1).locator('a');
    expect(await link.textContent()).toBe('session 1 · turn 2 · assistant model');
    await link.click();
    await page.waitForURL(`**/projects/${id}/sessions/hs-2#turn-2`);
    await page.waitForSelector('#turn-2');
    expect(
      await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned),
    ).toBeUndefined();
    expect(browser.pageErrors).toEqual([]);
  });
});
