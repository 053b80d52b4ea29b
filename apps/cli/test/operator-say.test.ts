import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';
import { oneLine, useRedisWorld, type RedisWorld } from './redis-fixtures.js';

let dir: string;
let world: RedisWorld;
useRedisWorld((fixture) => ({ dir, world } = fixture));

describe('baton say', () => {
  it('stores the guidance unacknowledged and publishes guidance-sent with secrets redacted', async () => {
    const id = world.projectId('sx');
    await world.control.createProject({ id, goal: '- a' });
    const text = 'Prefer small commits. password=hunter22';
    const result = await runCli(['say', id, text, '--json'], { cwd: dir, env: world.env(dir) });
    expect(result.code).toBe(0);
    const sent = JSON.parse(result.stdout) as { id: string; text: string };
    expect(sent).toMatchObject({ projectId: id, text, sessionRunning: false });
    const kept = await world.control.listGuidance(id);
    expect(kept).toEqual([expect.objectContaining({ id: sent.id, text, acknowledged: null })]);
    const events = (await world.control.readEvents(id)).map((entry) => entry.event);
    const event = events.find((entry) => entry.type === 'guidance-sent');
    expect(event).toMatchObject({ guidanceId: sent.id, runningSessionId: null });
    expect(String(event?.text)).toContain('[REDACTED');
    expect(String(event?.text)).not.toContain('hunter22');
  });

  it('refuses empty and too long text, an unknown project and a finished one, losing nothing', async () => {
    const id = world.projectId('sbad');
    await world.control.createProject({ id, goal: '- a' });
    const env = world.env(dir);
    const empty = await runCli(['say', id, '   '], { cwd: dir, env });
    expect(empty.code).toBe(2);
    expect(oneLine(empty.stderr)).toContain('guidance must not be empty');
    const long = await runCli(['say', id, 'x'.repeat(4001)], { cwd: dir, env });
    expect(long.code).toBe(2);
    expect(oneLine(long.stderr)).toContain('at most 4000');
    const unknown = await runCli(['say', 'ghost-2', 'hello'], { cwd: dir, env });
    expect(unknown.code).toBe(7);
    oneLine(unknown.stderr);
    await world.control.cancel(id);
    const finished = await runCli(['say', id, 'hello'], { cwd: dir, env });
    expect(finished.code).toBe(2);
    expect(oneLine(finished.stderr)).toContain(`project ${id} is cancelled`);
    expect(await world.control.listGuidance(id)).toEqual([]);
  });
});
