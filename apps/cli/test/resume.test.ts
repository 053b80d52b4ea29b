import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';
import { oneLine, useRedisWorld, type RedisWorld } from './redis-fixtures.js';

let dir: string;
let world: RedisWorld;
useRedisWorld((fixture) => ({ dir, world } = fixture));

describe('baton resume', () => {
  it('puts a cancelled project back in the queue with its next session', async () => {
    const id = world.projectId('rs');
    await world.control.createProject({ id, goal: '- a' });
    await world.control.cancel(id);
    const result = await runCli(['resume', id, '--json'], { cwd: dir, env: world.env(dir) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id, status: 'queued', jobId: `${id}@1` });
    expect((await world.control.queueCounts()).waiting).toBe(1);
    // A second resume does not queue a second session.
    const again = await runCli(['resume', id], { cwd: dir, env: world.env(dir) });
    expect(again.code).toBe(0);
    expect((await world.control.queueCounts()).waiting).toBe(1);
  });

  it('refuses a completed project with one line', async () => {
    const id = world.projectId('rs');
    await world.control.createProject({ id, goal: '- a' });
    await world.repository.transition(id, 'completed');
    const result = await runCli(['resume', id], { cwd: dir, env: world.env(dir) });
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain(`project ${id} is completed`);
  });
});
