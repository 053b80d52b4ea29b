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
