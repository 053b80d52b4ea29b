/**
 * A GET never starts a costly operation twice for one project at once: however many clients ask
 * for a project's branch diff while its `git fetch` runs, there is one fetch. The remote is a TCP
 * server that accepts and never answers, so the first fetch is held open for as long as the test
 * needs; every request arrives while it runs.
 */
import { afterEach, expect, it } from 'vitest';
import { randomHex, waitFor } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import {
  seedRemoteProject,
  startSilentRemote,
  type SilentRemote,
} from './support/silent-remote.js';

let dashboard: TestDashboard | undefined;
let remote: SilentRemote | undefined;

afterEach(async () => {
  await remote?.close();
  remote = undefined;
  await dashboard?.close();
  dashboard = undefined;
});

async function metric(name: string): Promise<number> {
  const text = await (await dashboard!.request('/metrics')).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? 'NaN');
}

it('runs one git fetch for eight concurrent diff requests of one project', async () => {
  dashboard = await startTestDashboard();
  remote = await startSilentRemote();
  const id = await seedRemoteProject(dashboard.repository, `diff-${randomHex(3)}`, remote.url);
  const answers = [...Array(8).keys()].map((index) =>
    dashboard!.request(`/api/projects/${id}/diff${index % 2 === 0 ? '' : '?stat=1'}`),
  );
  await waitFor(
    'all eight diff requests in progress',
    async () => (await metric('baton_dashboard_diff_requests_in_progress')) === 8,
  );
  await waitFor('the first fetch to connect', () => remote!.connections >= 1);
  expect(await metric('baton_dashboard_diff_fetches_total')).toBe(1);
  expect(remote.connections).toBe(1);
  remote.release();
  const statuses = (await Promise.all(answers)).map((response) => response.status);
  expect(statuses.every((status) => status === 503)).toBe(true);
  // The other variant (stat or full) waited for the first and then ran its own: two fetches in
  // all, one at a time.
  expect(await metric('baton_dashboard_diff_fetches_total')).toBe(2);
}, 60_000);
