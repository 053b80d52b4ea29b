import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomHex, waitFor } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { startSimWorker, type SimWorker } from './support/sim-worker.js';
import { connectSse, type SseConnection } from './support/sse-client.js';

describe('a project run on the simulator by a real worker, watched through the dashboard', () => {
  let dashboard: TestDashboard;
  let worker: SimWorker;
  let stream: SseConnection | undefined;

  beforeEach(async () => {
    dashboard = await startTestDashboard();
    worker = await startSimWorker({
      prefix: dashboard.prefix,
      memoryPrefix: dashboard.memoryPrefix,
    });
  });

  afterEach(async () => {
    stream?.close();
    await worker.stop();
    await dashboard.close();
  });

  it('shows features flipping live, the checklist, the progress log and per-turn tokens', async () => {
    stream = await connectSse(`${dashboard.server.url}/api/stream`);
    await stream.next((message) => message.event === 'snapshot');
    const id = `sim-${randomHex()}`;
    const created = await dashboard.request('/api/projects', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard.server.url },
      body: JSON.stringify({ id, goal: 'Build a calculator\n- add numbers\n- subtract numbers' }),
    });
    expect(created.status).toBe(201);

    // The projects stream reports every step: features 1/2 then 2/2 and the completed status.
    const progress = (passing: number) =>
      stream!.next((message) => {
        const project = message.data as {
          id: string;
          features: { passing: number; total: number };
        };
        return (
          message.event === 'project' &&
          project.id === id &&
          project.features.passing === passing &&
          project.features.total === 2
        );
      }, 30_000);
    await progress(1);
    await progress(2);
    await stream.next(
      (message) =>
        message.event === 'project' && (message.data as { status: string }).status === 'completed',
      30_000,
    );

    const checklist = await waitFor(
      'checklist',
      async () => {
        const body = (await (await dashboard.request(`/api/projects/${id}/checklist`)).json()) as {
          passing: number;
          rows: { flippedInSession: number | null }[];
        };
        return body.passing === 2 ? body : null;
      },
      15_000,
    );
    expect(checklist.rows.map((row) => row.flippedInSession)).toEqual([2, 3]);

    const progressLog = (await (
      await dashboard.request(`/api/projects/${id}/progress`)
    ).json()) as { html: string };
    expect(progressLog.html).toMatch(/Session/);

    const tokens = (await (await dashboard.request(`/api/projects/${id}/tokens`)).json()) as {
      turns: {
        inputTokens: number;
        uncachedInputTokens: number;
        cacheReadInputTokens: number;
        cacheCreationInputTokens: number;
        sessionNumber: number | null;
      }[];
    };
    expect(tokens.turns.length).toBeGreaterThan(3);
    expect(tokens.turns.every((turn) => turn.inputTokens > 0)).toBe(true);
    // Every request is cached: from the second turn on, most input is read from the cache.
    for (const turn of tokens.turns.slice(1)) {
      expect(turn.cacheReadInputTokens).toBeGreaterThan(turn.uncachedInputTokens);
      expect(turn.inputTokens).toBe(
        turn.uncachedInputTokens + turn.cacheReadInputTokens + turn.cacheCreationInputTokens,
      );
    }
    const listed = (await (await dashboard.request('/api/projects')).json()) as {
      projects: { id: string; tokens: { cacheRead: number; cacheHitRate: number } }[];
    };
    const row = listed.projects.find((project) => project.id === id);
    expect(row?.tokens.cacheRead).toBeGreaterThan(0);
    expect(row?.tokens.cacheHitRate).toBeGreaterThan(0.5);
    expect(new Set(tokens.turns.map((turn) => turn.sessionNumber)).size).toBeGreaterThanOrEqual(3);

    const history = (await (
      await dashboard.request(`/api/projects/${id}/memory/history?path=/memories/features.json`)
    ).json()) as { versions: unknown[] };
    expect(history.versions.length).toBeGreaterThanOrEqual(2);
  });
});
