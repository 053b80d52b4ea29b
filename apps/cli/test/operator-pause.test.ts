import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';
import { oneLine, useRedisWorld, type RedisWorld } from './redis-fixtures.js';

let dir: string;
let world: RedisWorld;
useRedisWorld((fixture) => ({ dir, world } = fixture));

describe('baton pause', () => {
  it('pauses a queued project, removes its queued session, and resume queues it again', async () => {
    const id = world.projectId('px');
    await world.control.createProject({ id, goal: '- a' });
    await world.control.enqueue(id);
    const result = await runCli(['pause', id, '--json'], { cwd: dir, env: world.env(dir) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      id,
      status: 'paused',
      changed: true,
      removedJobId: `${id}@1`,
    });
    expect((await world.control.queueCounts()).waiting).toBe(0);
    expect((await world.control.listTransitions(id)).at(-1)).toMatchObject({
      from: 'queued',
      to: 'paused',
      reason: 'paused by operator',
    });
    const again = await runCli(['pause', id], { cwd: dir, env: world.env(dir) });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `project ${id} is already paused; continue it with: baton resume ${id}\n`,
    );
    const resumed = await runCli(['resume', id], { cwd: dir, env: world.env(dir) });
    expect(resumed.code).toBe(0);
    expect((await world.control.queueCounts()).waiting).toBe(1);
  });

  it('refuses a finished project (exit 2) and an unknown one (exit 7) with one line each', async () => {
    const id = world.projectId('pdone');
    await world.control.createProject({ id, goal: '- a' });
    await world.repository.transition(id, 'completed');
    const completed = await runCli(['pause', id], { cwd: dir, env: world.env(dir) });
    expect(completed.code).toBe(2);
    expect(oneLine(completed.stderr)).toContain(`project ${id} is completed`);
    const unknown = await runCli(['pause', 'ghost-1'], { cwd: dir, env: world.env(dir) });
    expect(unknown.code).toBe(7);
    oneLine(unknown.stderr);
  });
});
