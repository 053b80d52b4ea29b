import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';
import { oneLine, useRedisWorld, type RedisWorld } from './redis-fixtures.js';

let dir: string;
let world: RedisWorld;
useRedisWorld((fixture) => ({ dir, world } = fixture));

describe('baton cancel', () => {
  it('marks a queued project cancelled and removes its queued session', async () => {
    const id = world.projectId('cx');
    await world.control.createProject({ id, goal: '- a' });
    await world.control.enqueue(id);
    expect((await world.control.queueCounts()).waiting).toBe(1);
    const result = await runCli(['cancel', id, '--json'], { cwd: dir, env: world.env(dir) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      id,
      status: 'cancelled',
      removedJobId: `${id}@1`,
    });
    expect((await world.control.queueCounts()).waiting).toBe(0);
    const transitions = await world.control.listTransitions(id);
    expect(transitions.at(-1)).toMatchObject({
      from: 'queued',
      to: 'cancelled',
      reason: 'cancelled by user',
    });
  });

  it('refuses a completed project and an unknown one with one line each', async () => {
    const id = world.projectId('done');
    await world.control.createProject({ id, goal: '- a' });
    await world.repository.transition(id, 'completed');
    const completed = await runCli(['cancel', id], { cwd: dir, env: world.env(dir) });
    expect(completed.code).toBe(2);
    expect(oneLine(completed.stderr)).toContain('already completed');
    const unknown = await runCli(['cancel', 'ghost-1'], { cwd: dir, env: world.env(dir) });
    expect(unknown.code).toBe(7);
    oneLine(unknown.stderr);
  });
});
