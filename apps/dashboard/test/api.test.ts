/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies: the assertions are the type checks */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { rollOverProgressLog } from '@baton/session';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomHex } from '@baton/test-support';
import { HOSTILE_MARKDOWN } from './fixtures/hostile.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { seedSession } from './support/seed.js';

const FEATURES = [
  { id: 'F1', description: 'add a todo', steps: ['run add'], passes: false },
  { id: 'F2', description: 'list todos', steps: ['run list'], passes: false },
];

describe('dashboard JSON API over the real control API', () => {
  let dashboard: TestDashboard;

  beforeEach(async () => {
    dashboard = await startTestDashboard();
  });

  afterEach(async () => {
    await dashboard.close();
  });

  async function post(pathname: string, body: unknown): Promise<{ status: number; body: any }> {
    const response = await dashboard.request(pathname, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard.server.url },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  /** A project two sessions in: F1 flipped by session 2, a context edit on its third turn. */
  async function seedProject(id = `p-${randomHex()}`) {
    const { control, repository } = dashboard;
    await control.createProject({ id, goal: 'Build a todo app\n- add a todo\n- list todos' });
    await repository.transition(id, 'running', { reason: 'test' });
    const store = await control.memoryStore(id);
    await store.write('features.json', JSON.stringify(FEATURES, null, 2), {
      mode: 'create',
      session: 's1',
    });
    await store.write('progress.md', HOSTILE_MARKDOWN, { mode: 'create', session: 's1' });
    await store.edit(
      'features.json',
      (current) => current.replace('"passes": false', '"passes": true'),
      {
        command: 'str_replace',
        session: 's2',
      },
    );
    await seedSession(repository, id, {
      sessionId: 's1',
      sessionNumber: 1,
      kind: 'init',
      turns: [{ input: 1_000 }, { input: 1_800 }],
      features: { before: [0, 0], after: [0, 2] },
    });
    await seedSession(repository, id, {
      sessionId: 's2',
      sessionNumber: 2,
      turns: [{ input: 2_000 }, { input: 3_000 }, { input: 1_500, cleared: 2_500 }],
      flipped: ['F1'],
      features: { before: [0, 2], after: [1, 2] },
    });
    return id;
  }

  it('lists projects with their status, features, tokens and USD, filtered by status', async () => {
    const running = await seedProject();
    const queued = `q-${randomHex()}`;
    await dashboard.control.createProject({ id: queued, goal: 'Other\n- one' });

    const all = await dashboard.json('/api/projects');
    expect(all.status).toBe(200);
    expect(all.body.projects.map((project: { id: string }) => project.id).sort()).toEqual(
      [queued, running].sort(),
    );
    expect(all.body.counts).toEqual({
      queued: 1,
      running: 1,
      paused: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
    });
    expect(all.body.total).toBe(2);
    expect(all.body.nextCursor).toBeNull();
    const view = all.body.projects.find((project: { id: string }) => project.id === running);
    expect(view).toMatchObject({
      status: 'running',
      features: { passing: 1, total: 2 },
      sessions: 2,
      tokens: { input: 9_300, output: 250, cleared: 2_500 },
    });
    expect(view.costUsd).toBeCloseTo(0.005);

    const onlyQueued = await dashboard.json('/api/projects?status=queued');
    expect(onlyQueued.body.projects.map((project: { id: string }) => project.id)).toEqual([queued]);
    const both = await dashboard.json('/api/projects?status=queued,running');
    expect(both.body.projects).toHaveLength(2);
    const bad = await dashboard.json('/api/projects?status=sleeping');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('status');
  });

  it('pages projects with a cursor that holds while projects are created, searched and filtered', async () => {
    const { control } = dashboard;
    const ids: string[] = [];
    for (let index = 0; index < 12; index++) {
      const id = `page-${String(index).padStart(2, '0')}`;
      await control.createProject({ id, goal: index % 3 === 0 ? 'Write a Parser' : 'Other work' });
      ids.push(id);
    }
    await control.cancel('page-01');
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let round = 0; round < 20; round++) {
      const query: string = `/api/projects?limit=5${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      // A project created between two pages is newer than the cursor: it shifts nothing.
      const [page] = await Promise.all([
        dashboard.json(query),
        control.createProject({ id: `late-${round}`, goal: 'late' }),
      ]);
      expect(page.status).toBe(200);
      expect(page.body.projects.length).toBeLessThanOrEqual(5);
      seen.push(...page.body.projects.map((project: { id: string }) => project.id));
      cursor = page.body.nextCursor;
      if (cursor === null) break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => id.startsWith('page-'))).toEqual([...ids].reverse());

    const search = await dashboard.json('/api/projects?q=PARSER&status=queued&sort=id&order=asc');
    expect(search.body.projects.map((project: { id: string }) => project.id)).toEqual([
      'page-00',
      'page-03',
      'page-06',
      'page-09',
    ]);
    expect(search.body.counts.cancelled).toBe(1);
    const cancelled = await dashboard.json('/api/projects?status=cancelled');
    expect(cancelled.body.projects.map((project: { id: string }) => project.id)).toEqual([
      'page-01',
    ]);
    for (const bad of ['limit=0', 'limit=x', 'cursor=..%2F', 'sort=goal', 'order=up']) {
      const answer = await dashboard.json(`/api/projects?${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(answer.body.error.code).toBe('invalid_input');
    }
  });

  it('returns a project with its sessions and timestamped transitions', async () => {
    const id = await seedProject();
    const { status, body } = await dashboard.json(`/api/projects/${id}`);
    expect(status).toBe(200);
    expect(body.project.id).toBe(id);
    expect(
      body.sessions.map((session: { sessionNumber: number }) => session.sessionNumber),
    ).toEqual([1, 2]);
    expect(body.transitions.map((transition: { to: string }) => transition.to)).toEqual([
      'queued',
      'running',
    ]);
    for (const transition of body.transitions) expect(transition.at).toBeGreaterThan(0);
    expect((await dashboard.json('/api/projects/nope-missing')).status).toBe(404);
    const escape = await dashboard.json('/api/projects/..%2F..%2Fetc');
    expect(escape.status).toBe(400);
    expect(escape.body.error.message).toMatch(/^invalid project id: id: must be 1-64 [^\n]+$/);
  });

  it('returns the webhook deliveries of a project, newest first, failures with their error', async () => {
    const id = await seedProject();
    const base = { notificationId: 'n1', projectId: id, type: 'project.paused' as const };
    await dashboard.repository.recordWebhookDelivery({
      ...base,
      target: 'http://127.0.0.1:1',
      ok: true,
      attempts: 1,
      status: 204,
      at: 1,
    });
    await dashboard.repository.recordWebhookDelivery({
      ...base,
      target: 'http://127.0.0.1:2',
      ok: false,
      attempts: 6,
      status: 500,
      error: 'receiver answered HTTP 500',
      at: 2,
    });
    const { body } = await dashboard.json(`/api/projects/${id}`);
    expect(body.webhooks).toMatchObject([
      { target: 'http://127.0.0.1:2', ok: false, attempts: 6, error: 'receiver answered HTTP 500' },
      { target: 'http://127.0.0.1:1', ok: true, attempts: 1 },
    ]);
    const events = (await dashboard.json(`/api/projects/${id}/events`)).body.events;
    expect(
      events
        .filter((entry: any) => entry.event.type === 'webhook-delivery')
        .map((entry: any) => entry.event.ok),
    ).toEqual([true, false]);
  });

  it('joins the checklist with the session that flipped each feature', async () => {
    const id = await seedProject();
    const { body } = await dashboard.json(`/api/projects/${id}/checklist`);
    expect(body).toMatchObject({ state: 'ok', passing: 1, total: 2 });
    expect(body.rows).toEqual([
      expect.objectContaining({ id: 'F1', passes: true, flippedInSession: 2 }),
      expect.objectContaining({ id: 'F2', passes: false, flippedInSession: null }),
    ]);
  });

  it('the progress view shows the whole log: archived entries first, then progress.md', async () => {
    const id = await seedProject();
    const store = await dashboard.control.memoryStore(id);
    const entries = Array.from(
      { length: 80 },
      (_, index) => `## Session ${index + 1}\n- ${'work '.repeat(30)}`,
    );
    await store.write('progress.md', `# Progress log\n\n${entries.join('\n\n')}\n`, {
      mode: 'overwrite',
    });
    expect(await rollOverProgressLog(store)).not.toBeNull();
    expect((await store.read('progress.md'))?.includes('## Session 1\n')).toBe(false);
    const { body } = await dashboard.json(`/api/projects/${id}/progress`);
    expect(body.markdown).toBe(`# Progress log\n\n${entries.join('\n\n')}\n`);
    expect(body.archives).toEqual(expect.arrayContaining(['/memories/progress/0001.md']));
    expect(body.html).toContain('<h2>Session 1</h2>');
    expect(body.html).toContain('<h2>Session 80</h2>');
  });

  it('renders a hostile progress log inert', async () => {
    const id = await seedProject();
    const { body } = await dashboard.json(`/api/projects/${id}/progress`);
    expect(body.markdown).toBe(HOSTILE_MARKDOWN);
    expect(body.html).toContain('<h1>Session 1</h1>');
    expect(body.html).not.toMatch(/<script|<img|<iframe|<div/i);
    expect(body.html).not.toMatch(/<[a-z][^>]*\son[a-z]+\s*=/i);
    // Text is escaped (no raw `<`), so `<a ` only opens a real tag.
    expect(body.html).not.toMatch(/<a\s[^>]*href="\s*(javascript|data|vbscript):/i);
    expect(body.html).toContain('&lt;script&gt;');
    const file = await dashboard.json(`/api/projects/${id}/memory/file?path=/memories/progress.md`);
    expect(file.body.html).toBe(body.html);
  });

  it('serves memory files, their versions and a diff between versions', async () => {
    const id = await seedProject();
    const files = await dashboard.json(`/api/projects/${id}/memory`);
    expect(files.body.files.map((file: { path: string }) => file.path)).toEqual([
      '/memories/features.json',
      '/memories/progress.md',
    ]);
    const file = await dashboard.json(
      `/api/projects/${id}/memory/file?path=/memories/features.json`,
    );
    expect(JSON.parse(file.body.content)[0].passes).toBe(true);
    expect(file.body.html).toBeNull();

    const history = await dashboard.json(
      `/api/projects/${id}/memory/history?path=/memories/features.json`,
    );
    expect(history.body.versions).toHaveLength(2);
    const [newest, oldest] = history.body.versions as { version: string; session?: string }[];
    expect(newest!.session).toBe('s2');
    expect(history.body.changes.map((change: { command: string }) => change.command)).toEqual([
      'create',
      'str_replace',
    ]);

    const diff = await dashboard.json(
      `/api/projects/${id}/memory/diff?path=/memories/features.json&from=${oldest!.version}&to=${newest!.version}`,
    );
    expect(diff.status).toBe(200);
    const changed = diff.body.diff.lines.filter((line: { op: string }) => line.op !== 'equal');
    expect(changed).toEqual([
      expect.objectContaining({ op: 'delete', text: '    "passes": false' }),
      expect.objectContaining({ op: 'insert', text: '    "passes": true' }),
    ]);
    // Without `from`, the diff is against the empty file (what the create wrote).
    const created = await dashboard.json(
      `/api/projects/${id}/memory/diff?path=/memories/features.json&to=${oldest!.version}`,
    );
    expect(created.body.diff.removed).toBe(0);
    expect(created.body.diff.added).toBe(JSON.stringify(FEATURES, null, 2).split('\n').length);
    const gone = await dashboard.json(
      `/api/projects/${id}/memory/diff?path=/memories/features.json&from=1:1&to=${newest!.version}`,
    );
    expect(gone.status).toBe(404);
  });

  it('refuses memory paths outside /memories', async () => {
    const id = await seedProject();
    for (const path of ['/etc/passwd', '/memories/../secret', '/memories//x', 'memories/x']) {
      const { status, body } = await dashboard.json(
        `/api/projects/${id}/memory/file?path=${encodeURIComponent(path)}`,
      );
      expect(status, path).toBe(400);
      expect(body.error.code).toBe('invalid_input');
    }
    expect(
      (await dashboard.json(`/api/projects/${id}/memory/file?path=/memories/absent.md`)).status,
    ).toBe(404);
  });

  it('gives input tokens per turn and marks where context edits cleared', async () => {
    const id = await seedProject();
    const { body } = await dashboard.json(`/api/projects/${id}/tokens`);
    expect(body.turns.map((turn: { inputTokens: number }) => turn.inputTokens)).toEqual([
      1_000, 1_800, 2_000, 3_000, 1_500,
    ]);
    const cleared = body.turns.filter(
      (turn: { clearedInputTokens: number }) => turn.clearedInputTokens > 0,
    );
    expect(cleared).toEqual([
      expect.objectContaining({
        sessionNumber: 2,
        turn: 3,
        clearedInputTokens: 2_500,
        edits: ['clear_tool_uses_20250919'],
      }),
    ]);
  });

  it('returns the latest events and pages after a stream id', async () => {
    const id = await seedProject();
    const tail = await dashboard.json(`/api/projects/${id}/events?limit=3`);
    expect(tail.body.events).toHaveLength(3);
    const all = await dashboard.json(`/api/projects/${id}/events?limit=1000`);
    const third = all.body.events[2].id as string;
    const after = await dashboard.json(`/api/projects/${id}/events?after=${third}&limit=2`);
    expect(after.body.events.map((entry: { id: string }) => entry.id)).toEqual(
      all.body.events.slice(3, 5).map((entry: { id: string }) => entry.id),
    );
    // Refusals are one line naming the field, by the request schemas of @baton/projects.
    const nonsense = await dashboard.json(`/api/projects/${id}/events?after=nonsense`);
    expect(nonsense.status).toBe(400);
    expect(nonsense.body.error.message).toBe(
      'invalid query: after: must be a stream id like 1700000000000-0',
    );
    const both = await dashboard.json(`/api/projects/${id}/events?after=1-0&before=2-0&extra=1`);
    expect(both.body.error.message).toBe(
      'invalid query: input: Unrecognized key: "extra"; before: give after or before, not both',
    );
  });

  it('creates and queues a project like baton enqueue, validating every field', async () => {
    const id = `new-${randomHex()}`;
    const created = await post('/api/projects', {
      id,
      goal: 'Build it\n- one',
      contextPreset: 'long-horizon',
      fallbackModel: 'claude-haiku-4-5',
      budgets: { maxUsd: 2, maxSessions: 5 },
    });
    expect(created.status).toBe(201);
    expect(created.body.project).toMatchObject({
      id,
      status: 'queued',
      contextPreset: 'long-horizon',
      fallbackModel: 'claude-haiku-4-5',
    });
    expect((await dashboard.control.getProject(id))?.fallbackModel).toBe('claude-haiku-4-5');
    expect(created.body.jobId).toEqual(expect.any(String));
    const counts = await dashboard.control.queueCounts();
    expect(counts.waiting).toBe(1);

    const duplicate = await post('/api/projects', { id, goal: 'again' });
    expect(duplicate.status).toBe(409);

    const invalid = await post('/api/projects', {
      id: '../x',
      goal: '',
      budgets: { maxUsd: -1 },
      fallbackModel: 'claude haiku',
      extra: 1,
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.message).toMatch(/fallbackModel: must be a model id/);
    expect(invalid.body.error.message).toMatch(/id:/);
    expect(invalid.body.error.message).toMatch(/goal:/);
    expect(invalid.body.error.message).toMatch(/budgets\.maxUsd:/);
    expect(invalid.body.error.message).toMatch(/extra/);

    const notJson = await dashboard.request('/api/projects', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: dashboard.server.url },
      body: 'id=x',
    });
    expect(notJson.status).toBe(415);
  });

  it("stores the context config of the dashboard's baton.config.json under the request's own, and shows it", async () => {
    await writeFile(
      path.join(dashboard.workspaceRoot, 'baton.config.json'),
      JSON.stringify({ context: { promptCache: { prefixTtl: '1h' } } }),
    );
    const id = `ctx-${randomHex()}`;
    const created = await post('/api/projects', {
      id,
      goal: 'Build it\n- one',
      contextPreset: 'long-horizon',
    });
    expect(created.status).toBe(201);
    expect((await dashboard.control.getProject(id))?.context).toEqual({
      preset: 'long-horizon',
      promptCache: { prefixTtl: '1h' },
    });
    const page = await dashboard.json(`/api/projects/${id}`);
    expect(page.body.project.context).toEqual({
      config: { preset: 'long-horizon', promptCache: { prefixTtl: '1h' } },
      summary: 'long-horizon · edits clear_tool_uses, compact · cache on (ttl 1h)',
    });

    const full = await post('/api/projects', {
      id: `ctx2-${randomHex()}`,
      goal: 'x',
      context: { preset: 'off', promptCache: false },
    });
    expect(full.status).toBe(201);
    expect(full.body.project.context.summary).toBe('off · no edits · cache off');

    const invalid = await post('/api/projects', {
      id: `ctx3-${randomHex()}`,
      goal: 'x',
      context: { clearToolUses: { keep: { type: 'tool_uses', value: -1 } } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.message).toMatch(
      /context\.clearToolUses\.keep\.value: must not be negative/,
    );
  });

  it('cancels and resumes through the control API', async () => {
    const id = await seedProject();
    const cancelled = await post(`/api/projects/${id}/cancel`, {});
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.project.status).toBe('cancelled');
    expect((await dashboard.control.getProject(id))?.status).toBe('cancelled');

    const resumed = await post(`/api/projects/${id}/resume`, {});
    expect(resumed.status).toBe(200);
    expect(resumed.body.project.status).toBe('queued');
    const transitions = await dashboard.control.listTransitions(id);
    expect(transitions.map((transition) => transition.to).slice(-2)).toEqual([
      'cancelled',
      'queued',
    ]);

    expect((await post('/api/projects/missing-one/cancel', {})).status).toBe(404);
  });

  it('pauses through the control API: paused by operator, a finished project is a conflict', async () => {
    const id = await seedProject();
    const paused = await post(`/api/projects/${id}/pause`, {});
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ project: { status: 'paused' }, changed: true });
    expect((await dashboard.control.listTransitions(id)).at(-1)).toMatchObject({
      to: 'paused',
      reason: 'paused by operator',
    });
    await post(`/api/projects/${id}/cancel`, {});
    const refused = await post(`/api/projects/${id}/pause`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('is cancelled');
    expect((await post('/api/projects/missing-one/pause', {})).status).toBe(404);
  });
});
