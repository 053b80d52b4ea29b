/// <reference lib="dom" />
/**
 * Verified progress in a real browser (Debian's /usr/bin/chromium through playwright-core): the
 * new-project form's default check and require-checks reach a real in-process worker whose
 * sessions run on the model simulator, and the checklist shows each feature's check badge with
 * its output on demand.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomHex, waitFor } from '@baton/test-support';
import { chromiumAvailable, launchTestBrowser, type TestBrowser } from './support/browser.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { SEEDED_COMMIT, seedCheckedProject } from './support/seed-checks.js';
import { startSimWorker, type SimWorker } from './support/sim-worker.js';

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
/** The project's default check: the feature's script must print its marker (BATON_FEATURE_ID). */
const DEFAULT_CHECK =
  'sh "features/$(echo "$BATON_FEATURE_ID" | tr A-Z a-z).sh" | grep "$BATON_FEATURE_ID ok"';

describe.skipIf(!chromiumAvailable)('verified progress in the browser', () => {
  let dashboard: TestDashboard;
  let worker: SimWorker;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
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
  });

  const url = (pathname: string) => new URL(pathname, dashboard.server.url).toString();
  const badge = (feature: string) => `[data-testid=check-badge-${feature}]`;

  it('creates a project with a default check and require-checks from the form; its features end verified at the final commit', async () => {
    const id = `vp-${randomHex(3)}`;
    await page.goto(url('/new'));
    await page.fill('input[name=id]', id);
    await page.fill(
      'textarea[name=goal]',
      'Todo app\n- Add a todo [sim:claim-first]\n- List todos [sim:no-check]\n- Mark done',
    );
    // A bad setting is one line from the shared schema, and creates nothing.
    await page.fill('input[name=check]', 'x'.repeat(5_000));
    await page.click('[data-testid=create-form] button[type=submit]');
    await page.waitForSelector('.form-message.error');
    const error = (await page.textContent('.form-message.error')) ?? '';
    expect(error).toContain('verification.check: is longer than 4096 characters');
    expect(error.split('\n')).toHaveLength(1);
    expect(await dashboard.control.getProject(id)).toBeNull();

    await page.fill('input[name=check]', DEFAULT_CHECK);
    await page.check('input[name=requireChecks]');
    await page.fill('input[name=checkTimeoutSeconds]', '45');
    await page.fill('input[name=regressionBudgetSeconds]', '30');
    await page.click('[data-testid=create-form] button[type=submit]');
    await page.waitForURL(`**/projects/${id}`);
    expect((await dashboard.control.getProject(id))?.verification).toEqual({
      check: DEFAULT_CHECK,
      requireChecks: true,
      checkTimeoutSeconds: 45,
      regressionBudgetSeconds: 30,
    });

    const done = await waitFor(
      'the project to complete',
      async () => {
        const project = await dashboard.control.getProject(id);
        return project?.status === 'completed' ? project : undefined;
      },
      120_000,
    );
    const commit = done.lastCheckpoint ?? '';
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    // The page refreshes its checklist on the stream's events; no reload.
    for (const feature of ['F1', 'F2', 'F3']) {
      await page.waitForSelector(`${badge(feature)}[data-check=verified]`, { timeout: 30_000 });
      // The badge may first show an earlier commit's evidence; it must come to the final one.
      await page
        .waitForFunction(
          ([selector, text]) => document.querySelector(selector as string)?.textContent === text,
          [badge(feature), `verified at ${commit.slice(0, 8)}`],
          { timeout: 30_000 },
        )
        .catch(() => undefined);
      expect(await page.textContent(badge(feature))).toBe(`verified at ${commit.slice(0, 8)}`);
    }
    // F2 has no check of its own: the project's default ran for it (require-checks let it pass).
    expect(await page.getAttribute(badge('F2'), 'title')).toContain(DEFAULT_CHECK);
    expect(await page.textContent('[data-testid=check-counts]')).toContain(
      '3 verified, 0 claimed without a check, 0 regressed.',
    );
    // The claim F1 made before writing any of it was refused: the record says so in its events.
    const events = (await dashboard.control.readEvents(id, { count: 10_000 })).map(
      (entry) => entry.event,
    );
    expect(
      events.find((event) => event.type === 'check-failed' && event.evidence.featureId === 'F1'),
    ).toBeDefined();

    // The output of F2's last run on demand: the default check's grep printed the marker.
    await page.click('[data-testid=check-output-F2] summary');
    await page.waitForSelector('[data-testid=check-output-F2] pre.check-tail');
    expect(await page.textContent('[data-testid=check-output-F2] pre.check-tail')).toBe(
      'F2 ok: List todos [sim:no-check]',
    );
    expect(await page.textContent('[data-testid=check-output-F2]')).toContain(`$ ${DEFAULT_CHECK}`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-checks.png'), fullPage: true });
    expect(browser.pageErrors).toEqual([]);
  }, 180_000);

  it('shows every check state as its own badge, the output tail only when asked', async () => {
    const id = `vs-${randomHex(3)}`;
    await seedCheckedProject(dashboard, id);
    const requests: string[] = [];
    page.on('request', (request) => requests.push(new URL(request.url()).pathname));
    await page.goto(url(`/projects/${id}`));
    await page.waitForSelector(badge('F6'));
    const states = await page.$$eval('[data-testid^=check-badge-]', (badges) =>
      badges.map((element) => [
        element.getAttribute('data-testid'),
        element.textContent,
        element.className,
      ]),
    );
    expect(states).toEqual([
      ['check-badge-F1', `verified at ${SEEDED_COMMIT.slice(0, 8)}`, 'badge check-pass'],
      ['check-badge-F2', 'claimed, unverified', 'badge check-claimed'],
      ['check-badge-F3', 'regressed', 'badge check-fail'],
      ['check-badge-F4', 'claim refused', 'badge check-fail'],
      ['check-badge-F5', 'failing', 'badge check-idle'],
      ['check-badge-F6', 'not checked yet', 'badge check-claimed'],
    ]);
    // Nothing asked for an output tail yet; opening F3's output fetches F3's alone.
    expect(requests.filter((pathname) => pathname.includes('/checks/'))).toEqual([]);
    expect(await page.isVisible('[data-testid=check-output-F3] pre')).toBe(false);
    await page.click('[data-testid=check-output-F3] summary');
    await page.waitForSelector('[data-testid=check-output-F3] pre.check-tail');
    expect(await page.textContent('[data-testid=check-output-F3] pre.check-tail')).toMatch(
      /F3 broken: expected 3 todos, got 2$/,
    );
    expect(requests.filter((pathname) => pathname.includes('/checks/'))).toEqual([
      `/api/projects/${id}/checks/F3`,
    ]);
    expect(browser.pageErrors).toEqual([]);
  }, 60_000);
});
