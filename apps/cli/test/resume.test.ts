import { describe, expect, it } from 'vitest';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton resume', () => {
  it('puts a cancelled project back in the queue with its next session', async () => {
    const { redis } = world;
    const id = redis.projectId('rs');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.control.cancel(id);
    const result = await world.cli(['resume', id, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id, status: 'queued', jobId: `${id}@1` });
    expect((await redis.control.queueCounts()).waiting).toBe(1);
    // A second resume does not queue a second session.
    const again = await world.cli(['resume', id]);
    expect(again.code).toBe(0);
    expect((await redis.control.queueCounts()).waiting).toBe(1);
  });

  it('refuses a completed project with one line', async () => {
    const { redis } = world;
    const id = redis.projectId('rs');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.repository.transition(id, 'completed');
    const result = await world.cli(['resume', id]);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain(`project ${id} is completed`);
  });
});
