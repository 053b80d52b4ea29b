/**
 * Bounded answers and work: list rows and stream messages carry a goal excerpt (the whole goal
 * only on the project's own endpoint), and event streams are capped per client address (503 past
 * the cap, a slot freed when a stream closes).
 */
import { afterEach, expect, it } from 'vitest';
import { randomHex, waitFor } from '@baton/test-support';
import { connectSse, type SseConnection } from './support/sse-client.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

let dashboard: TestDashboard | undefined;
const streams: SseConnection[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await dashboard?.close();
  dashboard = undefined;
});

it('sends a bounded goal excerpt in list rows and the whole goal only on the project endpoint', async () => {
  dashboard = await startTestDashboard();
  const id = `long-${randomHex(3)}`;
  const goal = `Build it\n${'- a feature with a long description\n'.repeat(2_800)}`.slice(
    0,
    100_000,
  );
  const { goal: stored } = await dashboard.control.createProject({ id, goal });
  expect(stored.length).toBeGreaterThan(99_000);
  const list = await dashboard.request('/api/projects?limit=500');
  const text = await list.text();
  expect(text.length).toBeLessThan(5_000);
  const row = (JSON.parse(text) as { projects: Array<Record<string, unknown>> }).projects[0];
  expect(row).toMatchObject({ id, goalTruncated: true, goalLength: stored.length });
  expect(String(row?.goal)).toBe(stored.slice(0, 300));
  const own = (await (await dashboard.request(`/api/projects/${id}`)).json()) as {
    project: { goal: string; goalTruncated: boolean };
  };
  expect(own.project).toMatchObject({ goal: stored, goalTruncated: false });
  // The project page's stream snapshot carries the excerpt too.
  const stream = await connectSse(`${dashboard.server.url}/api/projects/${id}/stream`);
  streams.push(stream);
  const snapshot = await stream.next((message) => message.event === 'snapshot');
  const data = snapshot.data as { project: { goal: string; goalTruncated: boolean } };
  expect(data.project.goal.length).toBe(300);
  expect(data.project.goalTruncated).toBe(true);
});

it('refuses event streams past the per-address cap with 503 and frees a slot on close', async () => {
  dashboard = await startTestDashboard({ maxStreamsPerAddress: 2 });
  const url = `${dashboard.server.url}/api/stream`;
  streams.push(await connectSse(url), await connectSse(url));
  const third = await fetch(url);
  expect(third.status).toBe(503);
  await third.body?.cancel();
  streams.shift()?.close();
  // The server frees the slot once it sees the stream closed.
  const reopened = await waitFor('a stream slot to be freed', async () => {
    const response = await fetch(url);
    await response.body?.cancel();
    return response.status === 200 ? response.status : null;
  });
  expect(reopened).toBe(200);
});

it('stops every list page at its byte bound and says where to continue, losing and repeating nothing', async () => {
  dashboard = await startTestDashboard({ maxPageBytes: 4_096 });
  const created: string[] = [];
  for (let index = 0; index < 12; index++) {
    const id = `bytes-${String(index).padStart(2, '0')}-${randomHex(2)}`;
    await dashboard.control.createProject({ id, goal: `- ${'x'.repeat(1_000)}` });
    created.push(id);
  }
  const seen: string[] = [];
  let cursor: string | null = '';
  let pages = 0;
  while (cursor !== null) {
    const response = await dashboard.request(
      `/api/projects?limit=500&sort=id&order=asc${cursor === '' ? '' : `&cursor=${cursor}`}`,
    );
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const page = JSON.parse(text) as { projects: Array<{ id: string }>; nextCursor: string | null };
    // Rows stop at 4 KiB (plus the counts and the one row that crossed the bound).
    expect(text.length).toBeLessThan(4_096 + 2_500);
    seen.push(...page.projects.map((project) => project.id));
    cursor = page.nextCursor;
    pages++;
  }
  expect(pages).toBeGreaterThan(2);
  expect(seen).toEqual([...created].sort());

  // Events page backwards from the newest the same way.
  const id = created[0] ?? '';
  for (let index = 0; index < 30; index++) {
    // Any event the log takes may carry more fields: 400 bytes of them here.
    const event = {
      v: 1,
      type: 'custom',
      at: Date.now(),
      projectId: id,
      note: `${index} ${'y'.repeat(400)}`,
    };
    await dashboard.repository.appendEvent(id, event);
  }
  const events: string[] = [];
  let before: string | null = null;
  do {
    const response = await dashboard.request(
      `/api/projects/${id}/events?limit=1000${before === null ? '' : `&before=${before}`}`,
    );
    const page = (await response.json()) as {
      events: Array<{ id: string }>;
      before: string | null;
    };
    expect(page.events.length).toBeLessThan(30);
    events.unshift(...page.events.map((event) => event.id));
    before = page.before;
  } while (before !== null);
  expect(new Set(events).size).toBe(events.length);
  expect(events.length).toBeGreaterThanOrEqual(30);
});
