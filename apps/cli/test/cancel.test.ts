import { describe, expect, it } from 'vitest';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton cancel', () => {
  it('marks a queued project cancelled and removes its queued session', async () => {
    const { redis } = world;
    const id = redis.projectId('cx');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.control.enqueue(id);
    expect((await redis.control.queueCounts()).waiting).toBe(1);
    const result = await world.cli(['cancel', id, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      id,
      status: 'cancelled',
      removedJobId: `${id}@1`,
    });
    expect((await redis.control.queueCounts()).waiting).toBe(0);
    const transitions = await redis.control.listTransitions(id);
    expect(transitions.at(-1)).toMatchObject({
      from: 'queued',
      to: 'cancelled',
      reason: 'cancelled by user',
    });
  });

  it('refuses a completed project and an unknown one with one line each', async () => {
    const { redis } = world;
    const id = redis.projectId('done');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.repository.transition(id, 'completed');
    const completed = await world.cli(['cancel', id]);
    expect(completed.code).toBe(2);
    expect(oneLine(completed.stderr)).toContain('already completed');
    const unknown = await world.cli(['cancel', 'ghost-1']);
    expect(unknown.code).toBe(7);
    oneLine(unknown.stderr);
  });
});
