import { describe, expect, it } from 'vitest';
import { waitForCompleted } from './support/redis.js';
import { stallSecondSession, useProcessWorld } from './support/process-world.js';
import { spawnWorker } from './support/worker-process.js';

describe('a transcript when its worker is killed with SIGKILL', () => {
  const world = useProcessWorld('baton-transcript-crash-');

  it('keeps every turn completed before the kill, and the resumed session gets a transcript of its own', async () => {
    const { control, sim, workers } = world;
    // Session 2 answers two requests, then its third hangs until the worker is gone.
    const { id, first, env } = await stallSecondSession(world, {
      label: 'tcrash',
      goal: 'Tools\n- add\n- subtract',
    });
    const victim = (await control.getProject(id))?.activeSession;
    expect(victim?.workerId).toBe('first');
    const sessionId = victim?.sessionId ?? '';
    const before = await control.readTranscript(id, sessionId);

    first.kill('SIGKILL');
    await first.exited;
    sim.setFaults({});
    sim.releaseStalls();
    const second = await spawnWorker({ ...env, BATON_WORKER_ID: 'second' });
    workers.push(second);
    await waitForCompleted(control, id, 60_000);

    const after = await control.readTranscript(id, sessionId);
    // Nothing was written after the kill and nothing written before it was lost.
    expect(after).toEqual(before);
    expect(after?.end).toBeNull();
    const assistant = after?.messages.filter((message) => message.role === 'assistant') ?? [];
    expect(assistant.map((message) => message.turn)).toEqual([1, 2]);
    // The results of turn 2's tool calls were kept before request 3 went out.
    const last = after?.messages.at(-1);
    expect(last).toMatchObject({ role: 'user', turn: 3 });
    expect(last?.content.some((block) => block.type === 'tool_result')).toBe(true);

    const listed = await control.listTranscripts(id);
    const attempts = listed.filter((summary) => summary.sessionNumber === victim?.sessionNumber);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ sessionId, end: null });
    expect(attempts[1]).toMatchObject({ interrupted: true, end: { outcome: 'completed' } });
  });
});
