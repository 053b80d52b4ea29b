import { describe, expect, it } from 'vitest';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton status', () => {
  it('--json has the status and features passing/total of one project', async () => {
    const { redis } = world;
    const id = redis.projectId('st');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.repository.redis.hset(
      redis.control.keys.project(id),
      'featuresPassing',
      1,
      'featuresTotal',
      3,
    );
    const result = await world.cli(['status', id, '--json']);
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({
      id,
      status: 'queued',
      features: { passing: 1, total: 3 },
      sessions: 0,
    });
  });

  it('prints a readable record, and a table without an id', async () => {
    const { redis } = world;
    const id = redis.projectId('st');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.control.cancel(id);
    const one = await world.cli(['status', id]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^project\s+/m);
    expect(one.stdout).toMatch(/^status\s+cancelled \(cancelled by user\)/m);
    const all = await world.cli(['status']);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(id);
    // Without an id, `status` is `projects`: the same columns and the same --json rows.
    const listed = await world.cli(['projects']);
    expect(all.stdout).toBe(listed.stdout);
    expect(all.stdout).toMatch(
      /^ID\s+STATUS\s+FEATURES\s+CHECKS\s+SESSIONS\s+TOKENS\s+CACHED\s+USD\s+SANDBOX$/m,
    );
    const allJson = await world.cli(['status', '--json']);
    const listedJson = await world.cli(['projects', '--json']);
    expect(JSON.parse(allJson.stdout)).toEqual(JSON.parse(listedJson.stdout));
  });

  it('an unknown project is one line and exit code 7', async () => {
    const result = await world.cli(['status', 'nope-nope']);
    expect(result.code).toBe(7);
    expect(oneLine(result.stderr)).toContain('no project nope-nope');
  });
});
