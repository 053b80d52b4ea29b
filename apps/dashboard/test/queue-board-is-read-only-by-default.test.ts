/**
 * Bull Board is read-only unless the operator turns writes on: by default no request can empty,
 * clean or pause the session queue (one authenticated PUT once emptied 1,500 waiting jobs and
 * left their projects queued forever), and Redis/kernel details stay hidden. `full` allows both;
 * `off` removes the board. `BATON_QUEUE_UI` sets the mode.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_QUEUE_NAME } from '@baton/projects';
import { randomHex } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

let dashboard: TestDashboard | undefined;
const previous = process.env.BATON_QUEUE_UI;
afterEach(async () => {
  if (previous === undefined) delete process.env.BATON_QUEUE_UI;
  else process.env.BATON_QUEUE_UI = previous;
  await dashboard?.close();
  dashboard = undefined;
});

async function queuedProject(target: TestDashboard): Promise<string> {
  const id = `queued-${randomHex(3)}`;
  await target.control.createProject({ id, goal: '- one' });
  await target.control.enqueue(id);
  return id;
}

const empty = (target: TestDashboard) =>
  target.request(`/queues/api/queues/${SESSION_QUEUE_NAME}/empty`, {
    method: 'PUT',
    headers: { origin: target.server.url },
  });

describe('the queue view', () => {
  it('is read-only by default: no job is removed, no Redis details are shown', async () => {
    delete process.env.BATON_QUEUE_UI;
    dashboard = await startTestDashboard({ withQueueBoard: true });
    await queuedProject(dashboard);
    expect((await empty(dashboard)).status).toBe(403);
    const clean = await dashboard.request(
      `/queues/api/queues/${SESSION_QUEUE_NAME}/clean/waiting`,
      { method: 'PUT', headers: { origin: dashboard.server.url } },
    );
    expect(clean.status).toBe(403);
    expect((await dashboard.control.queueCounts()).waiting).toBe(1);
    const stats = await dashboard.request('/queues/api/redis/stats');
    expect(stats.status).toBe(403);
    expect(await stats.text()).not.toMatch(/redis_version|"version"|"os"/);
    const queues = (await (await dashboard.request('/queues/api/queues')).json()) as {
      queues: Array<{ name: string; readOnlyMode: boolean }>;
    };
    expect(queues.queues.map((queue) => queue.readOnlyMode)).toEqual([true]);
  });

  it('allows changes and shows Redis stats with BATON_QUEUE_UI=full', async () => {
    process.env.BATON_QUEUE_UI = 'full';
    dashboard = await startTestDashboard({ withQueueBoard: true });
    await queuedProject(dashboard);
    const stats = (await (await dashboard.request('/queues/api/redis/stats')).json()) as {
      version?: string;
    };
    expect(stats.version).toMatch(/^\d+\.\d+/);
    expect((await empty(dashboard)).status).toBe(200);
    expect((await dashboard.control.queueCounts()).waiting ?? 0).toBe(0);
  });

  it('is gone with BATON_QUEUE_UI=off, and a wrong value stops the start', async () => {
    process.env.BATON_QUEUE_UI = 'off';
    dashboard = await startTestDashboard({ withQueueBoard: true });
    const page = await dashboard.request('/queues');
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('BATON_QUEUE_UI=off');
    expect((await dashboard.request('/queues/api/queues')).status).toBe(404);
    await dashboard.close();
    dashboard = undefined;
    process.env.BATON_QUEUE_UI = 'writable';
    await expect(startTestDashboard({ withQueueBoard: true })).rejects.toMatchObject({
      code: 'invalid_config',
      message: expect.stringContaining('BATON_QUEUE_UI must be one of read-only, full, off'),
    });
  });
});
