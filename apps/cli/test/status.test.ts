import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';
import { oneLine, useRedisWorld, type RedisWorld } from './redis-fixtures.js';

let dir: string;
let world: RedisWorld;
useRedisWorld((fixture) => ({ dir, world } = fixture));

describe('baton status', () => {
  it('--json has the status and features passing/total of one project', async () => {
    const id = world.projectId('st');
    await world.control.createProject({ id, goal: '- a' });
    await world.repository.redis.hset(
      world.control.keys.project(id),
      'featuresPassing',
      1,
      'featuresTotal',
      3,
    );
    const result = await runCli(['status', id, '--json'], { cwd: dir, env: world.env(dir) });
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
    const id = world.projectId('st');
    await world.control.createProject({ id, goal: '- a' });
    await world.control.cancel(id);
    const one = await runCli(['status', id], { cwd: dir, env: world.env(dir) });
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^project\s+/m);
    expect(one.stdout).toMatch(/^status\s+cancelled \(cancelled by user\)/m);
    const all = await runCli(['status'], { cwd: dir, env: world.env(dir) });
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(id);
    // Without an id, `status` is `projects`: the same columns and the same --json rows.
    const listed = await runCli(['projects'], { cwd: dir, env: world.env(dir) });
    expect(all.stdout).toBe(listed.stdout);
    expect(all.stdout).toMatch(
      /^ID\s+STATUS\s+FEATURES\s+CHECKS\s+SESSIONS\s+TOKENS\s+CACHED\s+USD\s+SANDBOX$/m,
    );
    const allJson = await runCli(['status', '--json'], { cwd: dir, env: world.env(dir) });
    const listedJson = await runCli(['projects', '--json'], { cwd: dir, env: world.env(dir) });
    expect(JSON.parse(allJson.stdout)).toEqual(JSON.parse(listedJson.stdout));
  });

  it('an unknown project is one line and exit code 7', async () => {
    const result = await runCli(['status', 'nope-nope'], { cwd: dir, env: world.env(dir) });
    expect(result.code).toBe(7);
    expect(oneLine(result.stderr)).toContain('no project nope-nope');
  });
});
