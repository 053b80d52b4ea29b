import { describe, expect, it } from 'vitest';
import { type EventEntry } from '../src/index.js';
import { randomProjectId, useControlWorld } from './support/redis.js';

describe('followEvents', () => {
  const world = useControlWorld();

  it('yields retained history then blocks for new events, and stops when aborted', async () => {
    const id = randomProjectId();
    const { repository } = world;
    await world.control.createProject({ id, goal: 'x' });
    await world.control.enqueue(id); // writes a session-queued event
    const abort = new AbortController();
    const seen: EventEntry[] = [];
    const following = (async () => {
      for await (const entry of world.control.followEvents(id, {
        signal: abort.signal,
        blockMs: 200,
      })) {
        seen.push(entry);
        if (seen.length === 3) abort.abort();
      }
    })();
    await repository.appendEvent(id, { v: 1, type: 'custom', at: Date.now(), projectId: id });
    await repository.appendEvent(id, { v: 1, type: 'custom', at: Date.now(), projectId: id });
    await following;
    // Entries of a type no reader knows come through decoded as unknown: they never stop a stream.
    expect(
      seen.map(({ event }) => (event.type === 'unknown' ? event.originalType : event.type)),
    ).toEqual(['session-queued', 'custom', 'custom']);
    // Ids increase, so a reader can resume after the last one it saw.
    const after = await world.control.readEvents(id, { fromId: seen[0]!.id });
    expect(after.map((entry) => entry.id)).toEqual([seen[1]!.id, seen[2]!.id]);
  });
});
