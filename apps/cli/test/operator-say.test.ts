import { describe, expect, it } from 'vitest';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton say', () => {
  it('stores the guidance unacknowledged and publishes guidance-sent with secrets redacted', async () => {
    const { redis } = world;
    const id = redis.projectId('sx');
    await redis.control.createProject({ id, goal: '- a' });
    const text = 'Prefer small commits. password=hunter22';
    const result = await world.cli(['say', id, text, '--json']);
    expect(result.code).toBe(0);
    const sent = JSON.parse(result.stdout) as { id: string; text: string };
    expect(sent).toMatchObject({ projectId: id, text, sessionRunning: false });
    const kept = await redis.control.listGuidance(id);
    expect(kept).toEqual([expect.objectContaining({ id: sent.id, text, acknowledged: null })]);
    const events = (await redis.control.readEvents(id)).map((entry) => entry.event);
    const event = events.find((entry) => entry.type === 'guidance-sent');
    expect(event).toMatchObject({ guidanceId: sent.id, runningSessionId: null });
    expect(String(event?.text)).toContain('[REDACTED');
    expect(String(event?.text)).not.toContain('hunter22');
  });

  it('refuses empty and too long text, an unknown project and a finished one, losing nothing', async () => {
    const { redis } = world;
    const id = redis.projectId('sbad');
    await redis.control.createProject({ id, goal: '- a' });
    const empty = await world.cli(['say', id, '   ']);
    expect(empty.code).toBe(2);
    expect(oneLine(empty.stderr)).toContain('guidance must not be empty');
    const long = await world.cli(['say', id, 'x'.repeat(4001)]);
    expect(long.code).toBe(2);
    expect(oneLine(long.stderr)).toContain('at most 4000');
    const unknown = await world.cli(['say', 'ghost-2', 'hello']);
    expect(unknown.code).toBe(7);
    oneLine(unknown.stderr);
    await redis.control.cancel(id);
    const finished = await world.cli(['say', id, 'hello']);
    expect(finished.code).toBe(2);
    expect(oneLine(finished.stderr)).toContain(`project ${id} is cancelled`);
    expect(await redis.control.listGuidance(id)).toEqual([]);
  });
});
