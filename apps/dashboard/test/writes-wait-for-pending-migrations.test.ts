/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies: the assertions are the type checks */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REDIS_URL, randomHex } from '@baton/test-support';
import { runRedisMigrations } from '@baton/projects';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

describe('the dashboard refuses writes while a Redis data migration is pending', () => {
  let dashboard: TestDashboard;
  let redis: Redis;

  beforeEach(async () => {
    dashboard = await startTestDashboard();
    redis = new Redis(REDIS_URL);
  });

  afterEach(async () => {
    redis.disconnect();
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

  it('answers 503 with the one line until a worker migrated the data; reads still answer', async () => {
    const id = `p-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'x' });
    // What an earlier Baton left: its projects and no record of migrations.
    await redis.del(dashboard.control.keys.migrations);

    const created = await post('/api/projects', { id: `q-${randomHex()}`, goal: 'y' });
    expect(created.status).toBe(503);
    expect(created.body.error.code).toBe('migration_pending');
    expect(created.body.error.message).toMatch(
      /^Redis \(prefix \{[^}]+\}\) holds data of an earlier Baton that is not migrated yet \(.*\): start a worker or `baton up` of this version first/,
    );
    expect(created.body.error.message).not.toContain('\n');
    const paused = await post(`/api/projects/${id}/pause`, {});
    expect([paused.status, paused.body.error.code]).toEqual([503, 'migration_pending']);
    const read = await dashboard.json(`/api/projects/${id}`);
    expect([read.status, read.body.project.status]).toEqual([200, 'queued']);

    await runRedisMigrations({
      redis,
      keys: dashboard.control.keys,
      legacyMemoryPrefix: dashboard.memoryPrefix,
    });
    const again = await post(`/api/projects/${id}/pause`, {});
    expect([again.status, again.body.project.status]).toEqual([200, 'paused']);
  });
});
