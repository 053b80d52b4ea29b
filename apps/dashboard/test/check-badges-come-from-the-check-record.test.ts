/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies: the assertions are the type checks */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomHex } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { SEEDED_COMMIT, SEEDED_TAIL, seedCheckedProject } from './support/seed-checks.js';

// Verified progress through the dashboard's HTTP API: the new-project form's `verification` field
// (the control API's schema, as `baton enqueue --check/--require-checks`) and the checklist's
// badges, read from the check record a worker stores (`…:checks`), never from the model's word.

describe('check badges and the verification field over the dashboard API', () => {
  let dashboard: TestDashboard;
  beforeEach(async () => {
    dashboard = await startTestDashboard();
  });
  afterEach(async () => {
    await dashboard.close();
  });

  async function post(body: unknown): Promise<{ status: number; body: any }> {
    const response = await dashboard.request('/api/projects', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard.server.url },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  it('creates a project with a default check and require-checks; bad settings are one line and create nothing', async () => {
    const id = `v-${randomHex()}`;
    for (const [verification, field] of [
      [{ requireChecks: 'yes' }, 'verification.requireChecks'],
      [{ check: '   ' }, 'verification.check: must not be empty'],
      [{ check: 'npm test\nrm -rf /' }, 'verification.check: must be one line'],
      [{ check: 'x'.repeat(5_000) }, 'verification.check: is longer than 4096 characters'],
      [{ check: 'true', extra: 1 }, 'verification'],
      [{ checkTimeoutSeconds: 0 }, 'verification.checkTimeoutSeconds: must be at least 1 second'],
      [{ regressionBudgetSeconds: 1.5 }, 'verification.regressionBudgetSeconds: must be a whole'],
      [{ regressionBudgetSeconds: 4_000 }, 'must be at most 3600 seconds'],
    ] as const) {
      const refused = await post({ id, goal: 'G\n- one', verification });
      expect(refused.status, JSON.stringify(verification)).toBe(400);
      expect(refused.body.error.message).toContain(field);
      expect(refused.body.error.message.split('\n')).toHaveLength(1);
      expect(await dashboard.control.getProject(id)).toBeNull();
    }

    const created = await post({
      id,
      goal: 'G\n- one',
      verification: {
        check: '  sh check.sh "$BATON_FEATURE_ID"  ',
        requireChecks: true,
        checkTimeoutSeconds: 30,
        regressionBudgetSeconds: 90,
      },
    });
    expect(created.status).toBe(201);
    // Parsed once by the shared schema (trimmed), stored as `baton enqueue --check` stores it.
    const stored = {
      check: 'sh check.sh "$BATON_FEATURE_ID"',
      requireChecks: true,
      checkTimeoutSeconds: 30,
      regressionBudgetSeconds: 90,
    };
    expect((await dashboard.control.getProject(id))?.verification).toEqual(stored);
    const { body } = await dashboard.json(`/api/projects/${id}/checks`);
    expect(body.verification).toEqual(stored);
  });

  it("shows each feature's state from the check record, the output tail only on demand", async () => {
    const { control } = dashboard;
    const id = `b-${randomHex()}`;
    await seedCheckedProject(dashboard, id);

    const { status, body } = await dashboard.json(`/api/projects/${id}/checks`);
    expect(status).toBe(200);
    expect(body.counts).toEqual({ passing: 3, total: 6, verified: 1, claimed: 1, regressed: 1 });
    expect(
      Object.fromEntries(body.features.map((row: any) => [row.id, [row.state, row.check]])),
    ).toEqual({
      F1: ['verified', 'sh features/f1.sh'],
      // No check of its own: the project's default check runs for it. F2 was accepted before
      // the default existed, so it stays claimed until its check runs.
      F2: ['claimed', 'sh default-check.sh'],
      F3: ['regressed', 'sh features/f3.sh'],
      F4: ['refused', 'sh features/f4.sh'],
      F5: ['failing', 'sh features/f5.sh'],
      F6: ['unverified', 'sh default-check.sh'],
    });
    const f1 = body.features.find((row: any) => row.id === 'F1');
    expect(f1.evidence).toMatchObject({ passed: true, commit: SEEDED_COMMIT, exitCode: 0 });
    // The list carries no output tails: they come one feature at a time.
    for (const row of body.features) expect(row.evidence?.outputTail).toBeUndefined();

    const one = await dashboard.json(`/api/projects/${id}/checks/F3`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: 'F3', state: 'regressed', evidence: { exitCode: 1 } });
    expect(one.body.evidence.outputTail).toBe(SEEDED_TAIL);

    const missing = await dashboard.json(`/api/projects/${id}/checks/F9`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe(`Project ${id} has no feature F9.`);
    const bad = await dashboard.json(`/api/projects/${id}/checks/${'F'.repeat(300)}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('invalid project or feature id: feature');
    const newline = await dashboard.json(`/api/projects/${id}/checks/F1%0AF2`);
    expect(newline.status).toBe(400);
    expect(newline.body.error.message).toContain('feature: must be one line');
    const noProject = await dashboard.json(`/api/projects/nope-${randomHex()}/checks`);
    expect(noProject.status).toBe(404);

    // Before init wrote a checklist: no rows, still an answer.
    const fresh = `f-${randomHex()}`;
    await control.createProject({ id: fresh, goal: 'G\n- a' });
    expect((await dashboard.json(`/api/projects/${fresh}/checks`)).body).toMatchObject({
      id: fresh,
      features: [],
      verification: null,
    });
  });
});
