/**
 * A GET never starts a costly operation twice for one project at once: however many clients ask
 * for a project's branch diff while its `git fetch` runs, there is one fetch. The remote is a TCP
 * server that accepts and never answers, so the first fetch is held open for as long as the test
 * needs; every request arrives while it runs.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { projectBranch } from '@baton/workspace';
import { randomHex, waitFor } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

let dashboard: TestDashboard | undefined;
let silent: Server | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise((resolve) => (silent ? silent.close(resolve) : resolve(undefined)));
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
  let connections = 0;
  let released = false;
  silent = createServer((socket) => {
    connections++;
    // Held open (the fetch waits) until the test releases it; after that, refused at once.
    if (released) socket.destroy();
    else sockets.push(socket);
  });
  await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as AddressInfo).port;
  const id = `diff-${randomHex(3)}`;
  // Seeded as a worker would have stored it: the creation-time checks are not under test here.
  await dashboard.repository.create({
    id,
    goal: '- one',
    workspace: null,
    repo: `http://127.0.0.1:${port}/repo.git`,
    base: 'main',
    baseCommit: '0'.repeat(40),
    branch: projectBranch(id),
    skipHooks: false,
    lastCheckpoint: null,
    model: null,
    fallbackModel: null,
    budgets: {},
    contextPreset: 'coding',
    context: { preset: 'coding' },
    sandbox: null,
    verification: null,
    createdAt: Date.now(),
  });
  const answers = [...Array(8).keys()].map((index) =>
    dashboard!.request(`/api/projects/${id}/diff${index % 2 === 0 ? '' : '?stat=1'}`),
  );
  await waitFor(
    'all eight diff requests in progress',
    async () => (await metric('baton_dashboard_diff_requests_in_progress')) === 8,
  );
  await waitFor('the first fetch to connect', () => connections >= 1);
  expect(await metric('baton_dashboard_diff_fetches_total')).toBe(1);
  expect(connections).toBe(1);
  released = true;
  for (const socket of sockets.splice(0)) socket.destroy();
  const statuses = (await Promise.all(answers)).map((response) => response.status);
  expect(statuses.every((status) => status === 503)).toBe(true);
  // The other variant (stat or full) waited for the first and then ran its own: two fetches in
  // all, one at a time.
  expect(await metric('baton_dashboard_diff_fetches_total')).toBe(2);
}, 60_000);
