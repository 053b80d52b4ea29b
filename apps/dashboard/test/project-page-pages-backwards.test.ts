/// <reference lib="dom" />
/**
 * A project page stays bounded as the project grows: the session table, the event list and the
 * token chart load their newest window and page backwards on demand (browser and API).
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
import { seedTurn } from './support/seed.js';
import { sessionSummary } from './support/session-summary.js';

const SESSIONS = 120;
const EVENTS = 450;

describe.skipIf(!chromiumAvailable)('a long project page, paged backwards', () => {
  let dashboard: TestDashboard;
  let browser: TestBrowser;
  let page: Page;
  const id = 'long-project';
  const eventIds: string[] = [];

  beforeAll(async () => {
    dashboard = await startTestDashboard();
    const { control, repository } = dashboard;
    await control.createProject({ id, goal: 'Long\n- one' });
    for (let number = 1; number <= SESSIONS; number++) {
      await repository.recordSessionEnd(id, sessionSummary(number), { failed: false });
    }
    for (let turn = 1; turn <= EVENTS; turn++) {
      eventIds.push(
        await repository.appendEvent(id, seedTurn(id, 's1', turn, { inputTokens: turn })),
      );
    }
    browser = await launchTestBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
  });

  const count = (selector: string) => page.locator(selector).count();

  it('shows the newest sessions and events and loads older ones on demand', async () => {
    await page.goto(new URL(`/projects/${id}`, dashboard.server.url).toString());
    await page.waitForSelector('#sessions table tbody tr');
    await page.waitForSelector('[data-testid=event-tail] li');
    expect(await count('#sessions tbody tr')).toBe(50);
    expect(await page.getAttribute('#sessions tbody tr:last-child', 'data-session')).toBe('s120');
    await loadOlder(
      page,
      { button: '[data-testid=older-sessions]', rows: '#sessions tbody tr' },
      [100, 120],
    );
    expect(await page.isHidden('[data-testid=older-sessions]')).toBe(true);
    expect(await page.getAttribute('#sessions tbody tr:first-child', 'data-session')).toBe('s1');

    expect(await count('[data-testid=event-tail] li')).toBe(200);
    await loadOlder(
      page,
      { button: '[data-testid=older-events]', rows: '[data-testid=event-tail] li' },
      [400, EVENTS],
    );
    const shown = await page.$$eval('[data-testid=event-tail] li', (items) =>
      items.map((item) => (item as HTMLElement).dataset.id),
    );
    // Newest first, every event once, down to the first.
    expect(shown).toEqual([...eventIds].reverse());
    expect(await page.isHidden('[data-testid=older-events]')).toBe(true);
    expect(browser.pageErrors).toEqual([]);
  });

  it('pages the token chart and the event list backwards in the API', async () => {
    const tokens = (await (
      await dashboard.request(`/api/projects/${id}/tokens?limit=100`)
    ).json()) as { turns: { turn: number }[]; before: string | null };
    expect(tokens.turns.map((turn) => turn.turn)).toEqual(
      Array.from({ length: 100 }, (_, index) => EVENTS - 99 + index),
    );
    expect(tokens.before).toBe(eventIds[EVENTS - 100]);
    const earlier = (await (
      await dashboard.request(`/api/projects/${id}/tokens?limit=100&before=${tokens.before}`)
    ).json()) as { turns: { turn: number }[] };
    expect(earlier.turns[99]?.turn).toBe(EVENTS - 100);
    const bad = await dashboard.request(`/api/projects/${id}/events?before=x`);
    expect(bad.status).toBe(400);
  });
});
