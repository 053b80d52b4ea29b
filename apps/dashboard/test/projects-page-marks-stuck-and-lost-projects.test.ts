/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies: the assertions are the type checks */
import { createSessionQueue, sessionJobId } from '@baton/projects';
import { randomHex } from '@baton/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchTestBrowser } from './support/browser.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

describe('the projects page marks projects nothing runs and what is left of lost ones', () => {
  let dashboard: TestDashboard;
  let ids: { stuck: string; healthy: string; fragment: string; orphan: string; lone: string };

  beforeEach(async () => {
    dashboard = await startTestDashboard();
    const { control, repository } = dashboard;
    ids = {
      stuck: `stuck-${randomHex()}`,
      healthy: `fine-${randomHex()}`,
      fragment: `ghost-${randomHex()}`,
      orphan: `lost-${randomHex()}`,
      lone: `alone-${randomHex()}`,
    };
    // Queued, and no job will ever run it (its job was lost to a Redis fault).
    await control.createProject({ id: ids.stuck, goal: '- a' });
    await control.createProject({ id: ids.healthy, goal: '- a' });
    await control.enqueue(ids.healthy);
    // What Redis losing its data mid-run can leave: a record's fragments, and session jobs of
    // projects whose records are gone.
    await repository.redis.hset(control.keys.project(ids.fragment), 'status', 'running');
    // A fragment no session job names: found by the bounded scan of the project hashes.
    await repository.redis.hset(control.keys.project(ids.lone), 'sessions', '2');
    const queue = createSessionQueue({ connection: repository.redis, keys: control.keys });
    try {
      for (const id of [ids.fragment, ids.orphan]) {
        await queue.add(
          'chain',
          // The lost project's creation time: a job never names a project created since.
          { projectId: id, sessionNumber: 2, reason: 'chain', generation: Date.now() - 3_600_000 },
          { jobId: sessionJobId(id, 2), delay: 3_600_000 },
        );
      }
    } finally {
      await queue.close();
    }
  });

  afterEach(async () => {
    await dashboard.close();
  });

  it('GET /api/problems names each with its kind, problem and fix; a healthy project is not there', async () => {
    const { status, body } = await dashboard.json('/api/problems');
    expect(status).toBe(200);
    const byId = new Map<string, any>(
      body.problems.map((problem: any) => [problem.projectId, problem]),
    );
    expect(byId.get(ids.stuck)).toEqual({
      projectId: ids.stuck,
      kind: 'stuck',
      problem: 'queued but no session job is waiting and no worker holds it',
      fix: `baton resume ${ids.stuck}`,
    });
    expect(byId.get(ids.fragment)).toMatchObject({
      kind: 'fragment',
      problem: expect.stringContaining('only fragments of its record are left (status)'),
      fix: expect.stringContaining(`baton enqueue --project ${ids.fragment}`),
    });
    expect(byId.get(ids.orphan)).toMatchObject({
      kind: 'orphan-job',
      problem: expect.stringContaining('which Redis no longer has'),
      fix: expect.stringContaining(`baton enqueue --project ${ids.orphan}`),
    });
    expect(byId.get(ids.lone)).toMatchObject({
      kind: 'fragment',
      problem: expect.stringContaining('only fragments of its record are left (sessions)'),
      fix: expect.stringContaining(`baton enqueue --project ${ids.lone}`),
    });
    expect(byId.has(ids.healthy)).toBe(false);
    expect(body.incomplete).toBeNull();

    // Fixed through the same API: the stuck project is queued again and leaves the list.
    const resumed = await dashboard.request(`/api/projects/${ids.stuck}/resume`, {
      method: 'POST',
      headers: { origin: dashboard.server.url },
    });
    expect(resumed.status).toBe(200);
    const after = await dashboard.json('/api/problems');
    expect(after.body.problems.map((problem: any) => problem.projectId)).not.toContain(ids.stuck);
  });

  it.skipIf(!chromiumAvailable)(
    'the page shows one marker line per problem above the rows',
    async () => {
      const browser = await launchTestBrowser();
      try {
        const { page } = browser;
        await page.goto(new URL('/', dashboard.server.url).toString());
        const markers = page.locator('[data-testid=project-problem]');
        await markers.first().waitFor();
        const texts = await markers.allTextContents();
        const line = (id: string) => texts.find((text) => text.startsWith(`${id}:`));
        expect(line(ids.stuck)).toBe(
          `${ids.stuck}: queued but no session job is waiting and no worker holds it. Fix: baton resume ${ids.stuck}`,
        );
        expect(line(ids.fragment)).toContain('only fragments of its record are left');
        expect(line(ids.orphan)).toContain('which Redis no longer has');
        expect(line(ids.lone)).toContain('only fragments of its record are left');
        expect(line(ids.healthy)).toBeUndefined();
        // A stuck project links to its page; a lost one has none to link to.
        await expect
          .poll(() =>
            page.locator(`[data-testid=project-problem] a[href="/projects/${ids.stuck}"]`).count(),
          )
          .toBe(1);
        expect(
          await page
            .locator(`[data-testid=project-problem] a[href="/projects/${ids.orphan}"]`)
            .count(),
        ).toBe(0);
        // Past 10 lines the rest is counted, and `baton status` names them all.
        for (let index = 0; index < 10; index++) {
          await dashboard.control.createProject({
            id: `more-${index}-${randomHex()}`,
            goal: '- a',
          });
        }
        await page.reload();
        await page.locator('[data-testid=project-problems-more]').waitFor();
        expect(await markers.count()).toBe(10);
        expect(await page.locator('[data-testid=project-problems-more]').textContent()).toBe(
          'and 4 more: baton status lists them all',
        );
        expect(browser.pageErrors).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});
