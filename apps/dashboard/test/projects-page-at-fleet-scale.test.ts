/// <reference lib="dom" />
/**
 * The projects page over a fleet, in Debian's Chromium: server-side pages, search and status
 * filter, rows patched in place, live updates coalesced per animation frame, counts updated
 * without touching the table. No worker runs: the tests move projects through the control API
 * and the repository, as workers and users do.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import {
  chromiumAvailable,
  launchTestBrowser,
  loadOlder,
  type TestBrowser,
} from './support/browser.js';

interface Probe {
  marker?: string;
  frames: number;
  /** Animation frame of each MutationObserver callback on the table body. */
  mutationFrames: number[];
  bodyMutations: number;
}

describe.skipIf(!chromiumAvailable)('the projects page at fleet scale', () => {
  let dashboard: TestDashboard;
  let browser: TestBrowser;
  let page: Page;
  const ids: string[] = [];

  beforeAll(async () => {
    dashboard = await startTestDashboard();
    for (let index = 0; index < 120; index++) {
      const id = `fleet-${String(index).padStart(3, '0')}`;
      const goal = index % 10 === 0 ? `Write the needle parser ${index}` : `Routine work ${index}`;
      await dashboard.control.createProject({ id, goal });
      ids.push(id);
    }
    browser = await launchTestBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
  });

  const url = (pathname: string) => new URL(pathname, dashboard.server.url).toString();
  const rowIds = () =>
    page.$$eval('[data-testid=projects-table] tbody tr', (rows) =>
      rows.map((row) => (row as HTMLElement).dataset.project),
    );
  const chip = (status: string) =>
    page.textContent(`.filters button[data-status="${status}"] .count`);

  async function openProjects(pathname = '/') {
    await page.goto(url(pathname));
    await page.waitForSelector('main[data-loaded=true]');
    await page.waitForSelector('#live[data-state=open]');
  }

  it('shows the newest page first with the fleet counts and loads older pages on demand', async () => {
    await openProjects();
    expect(await rowIds()).toEqual([...ids].reverse().slice(0, 50));
    expect(await chip('all')).toBe('120');
    expect(await chip('queued')).toBe('120');
    await loadOlder(
      page,
      { button: '[data-testid=load-more]', rows: '[data-testid=projects-table] tbody tr' },
      [100, 120],
    );
    expect(await page.isHidden('[data-testid=load-more]')).toBe(true);
    expect(await rowIds()).toEqual([...ids].reverse());
    expect(browser.pageErrors).toEqual([]);
  });

  it('patches a changed row in place: the same element before and after the event', async () => {
    await openProjects();
    const id = ids[119]!;
    await page.evaluate((projectId) => {
      const row = document.querySelector(`tr[data-project="${projectId}"]`) as HTMLElement & {
        __probe?: string;
      };
      row.__probe = 'before';
    }, id);
    await dashboard.repository.transition(id, 'running', { reason: 'test' });
    await page.waitForSelector(`tr[data-project="${id}"][data-status=running]`);
    const same = await page.evaluate((projectId) => {
      const row = document.querySelector(`tr[data-project="${projectId}"]`) as HTMLElement & {
        __probe?: string;
      };
      return row.__probe;
    }, id);
    expect(same).toBe('before');
    expect(await page.textContent(`tr[data-project="${id}"] .badge`)).toBe('running');
    await page.waitForFunction(
      () =>
        document.querySelector('.filters button[data-status="running"] .count')?.textContent ===
        '1',
    );
    await dashboard.repository.transition(id, 'queued', { reason: 'test' });
    await page.waitForSelector(`tr[data-project="${id}"][data-status=queued]`);
  });

  it('applies a burst of live changes at most once per animation frame', async () => {
    await openProjects();
    await page.evaluate(() => {
      const probe: Probe = { frames: 0, mutationFrames: [], bodyMutations: 0 };
      (window as unknown as { __probe: Probe }).__probe = probe;
      const tick = () => {
        probe.frames++;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      const body = document.querySelector('[data-testid=projects-table] tbody')!;
      new MutationObserver(() => probe.mutationFrames.push(probe.frames)).observe(body, {
        subtree: true,
        childList: true,
        attributes: true,
        characterData: true,
      });
    });
    const burst = ids.slice(70, 120);
    await Promise.all(
      burst.map((id) => dashboard.repository.transition(id, 'running', { reason: 'burst' })),
    );
    await page.waitForFunction(
      (count) =>
        document.querySelectorAll('[data-testid=projects-table] tr[data-status=running]').length ===
        count,
      burst.length,
    );
    const probe = await page.evaluate(() => (window as unknown as { __probe: Probe }).__probe);
    // Each observer callback is one task's worth of DOM changes: never two in one frame.
    expect(probe.mutationFrames.length).toBeGreaterThan(0);
    expect(new Set(probe.mutationFrames).size).toBe(probe.mutationFrames.length);
    expect(probe.mutationFrames.length).toBeLessThan(burst.length);
    await Promise.all(
      burst.map((id) => dashboard.repository.transition(id, 'queued', { reason: 'burst' })),
    );
    await page.waitForFunction(
      () =>
        document.querySelectorAll('[data-testid=projects-table] tr[data-status=running]').length ===
        0,
    );
  });

  it('updates counts without touching the table, and filters by status with live updates', async () => {
    await openProjects('/?status=cancelled');
    expect(await rowIds()).toEqual([]);
    expect(await page.isVisible('p.empty')).toBe(true);
    await page.evaluate(() => {
      const probe: Probe = { frames: 0, mutationFrames: [], bodyMutations: 0 };
      (window as unknown as { __probe: Probe }).__probe = probe;
      const body = document.querySelector('[data-testid=projects-table] tbody')!;
      new MutationObserver((records) => (probe.bodyMutations += records.length)).observe(body, {
        subtree: true,
        childList: true,
        attributes: true,
        characterData: true,
      });
    });
    // A new queued project: the counts move, the (cancelled-only) table does not.
    await dashboard.control.createProject({ id: 'fleet-extra', goal: 'extra' });
    await page.waitForFunction(
      () =>
        document.querySelector('.filters button[data-status="all"] .count')?.textContent === '121',
    );
    expect(
      await page.evaluate(() => (window as unknown as { __probe: Probe }).__probe.bodyMutations),
    ).toBe(0);
    // Cancelled elsewhere: it enters the filtered table live; resumed, it leaves it.
    await dashboard.control.cancel(ids[5]!);
    await page.waitForSelector(`tr[data-project="${ids[5]}"][data-status=cancelled]`);
    expect(await chip('cancelled')).toBe('1');
    await dashboard.control.resume(ids[5]!);
    await page.waitForFunction(
      (id) => document.querySelector(`tr[data-project="${id}"]`) === null,
      ids[5]!,
    );
    await page.waitForFunction(
      () =>
        document.querySelector('.filters button[data-status="cancelled"] .count')?.textContent ===
        '0',
    );
    // The chips choose the filter: all again.
    await page.click('.filters button[data-status="all"]');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=projects-table] tbody tr').length === 50,
    );
    expect(new URL(page.url()).searchParams.get('status')).toBeNull();
  });

  it('searches ids and goals on the server from the search box', async () => {
    await openProjects();
    await page.fill('[data-testid=project-search]', 'NEEDLE');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=projects-table] tbody tr').length === 12,
    );
    const found = await rowIds();
    expect(found).toEqual(ids.filter((_, index) => index % 10 === 0).reverse());
    expect(new URL(page.url()).searchParams.get('q')).toBe('NEEDLE');
    await page.fill('[data-testid=project-search]', 'fleet-007');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=projects-table] tbody tr').length === 1,
    );
    expect(await rowIds()).toEqual(['fleet-007']);
    await page.fill('[data-testid=project-search]', 'nothing like this');
    await page.waitForSelector('p.empty:not([hidden])');
    expect(await page.textContent('p.empty')).toBe('No projects match.');
    expect(browser.pageErrors).toEqual([]);
  });
});
