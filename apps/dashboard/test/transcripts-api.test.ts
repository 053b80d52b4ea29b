import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomHex } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { seedHostileTranscript } from './support/seed-transcript.js';

describe('transcript and search API', () => {
  let dashboard: TestDashboard;

  beforeEach(async () => {
    dashboard = await startTestDashboard();
  });
  afterEach(async () => {
    await dashboard.close();
  });

  it('lists and returns a transcript, with model text rendered by the memory sanitiser', async () => {
    const id = `t-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'Hostile\n- one' });
    await seedHostileTranscript(dashboard.repository, id, 'hs-1');
    const listed = await dashboard.json(`/api/projects/${id}/transcripts`);
    expect(listed.status).toBe(200);
    expect(listed.body.transcripts).toEqual([
      expect.objectContaining({ sessionId: 'hs-1', sessionNumber: 1, messageCount: 4 }),
    ]);
    const one = await dashboard.json(`/api/projects/${id}/transcripts/hs-1`);
    expect(one.status).toBe(200);
    const [, assistant, results] = one.body.transcript.messages;
    const text = assistant.content[0];
    expect(text.text).toContain('<script>window.__pwned = 1</script>');
    // Tags only of the allowlist, no handler attribute on any, no script URL in any link.
    expect(text.html).not.toMatch(/<script/iu);
    expect(text.html).not.toMatch(/<[a-z][^>]*\son\w+=/iu);
    expect(text.html).not.toMatch(/<[a-z][^>]*\shref="\s*(javascript|data|vbscript):/iu);
    expect(text.html).toContain('&lt;script&gt;');
    // Tool results and inputs are data: the page shows them as text, so they stay as written.
    expect(results.content[0]).toMatchObject({ type: 'tool_result', capped: { kept: 8000 } });
    expect(results.content[0].html).toBeUndefined();

    expect((await dashboard.json(`/api/projects/${id}/transcripts/hs-2`)).status).toBe(404);
    const bad = await dashboard.json(
      `/api/projects/${id}/transcripts/${encodeURIComponent('{x}')}`,
    );
    expect(bad.status).toBe(400);
    expect((await dashboard.json(`/api/projects/ghost-${randomHex()}/transcripts`)).status).toBe(
      404,
    );
  });

  it('searches memory and transcripts, and refuses an empty or too long text', async () => {
    const id = `s-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'Search\n- one' });
    await seedHostileTranscript(dashboard.repository, id, 'hs-1');
    const store = await dashboard.control.memoryStore(id);
    await store.write('notes.md', 'line one\nthe Needle-In-Memory is here\n', { mode: 'create' });
    const found = await dashboard.json(
      `/api/projects/${id}/search?q=${encodeURIComponent('needle-in')}`,
    );
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({
      query: 'needle-in',
      truncated: false,
      hits: [
        { source: 'memory', path: '/memories/notes.md', line: 2 },
        {
          source: 'transcript',
          sessionId: 'hs-1',
          sessionNumber: 1,
          turn: 2,
          role: 'assistant',
          block: 'text',
        },
      ],
    });
    expect(found.body.hits[1].snippet).toContain('needle-in-transcript');
    const limited = await dashboard.json(`/api/projects/${id}/search?q=pwned&limit=2`);
    expect(limited.body).toMatchObject({ truncated: true });
    expect(limited.body.hits).toHaveLength(2);
    for (const q of ['', '   ', 'x'.repeat(201)]) {
      const refused = await dashboard.json(`/api/projects/${id}/search?q=${encodeURIComponent(q)}`);
      expect(refused.status, JSON.stringify(q)).toBe(400);
      expect(refused.body.error.message).toMatch(/search text/u);
    }
    expect((await dashboard.json(`/api/projects/${id}/search`)).status).toBe(400);
  });
});
