import { describe, expect, it } from 'vitest';
import { openCommandMonitor } from '@baton/test-support';
import { isProjectError } from '../src/index.js';
import { randomProjectId, useControlWorld } from './support/redis.js';

describe('readEvents({ last })', () => {
  const world = useControlWorld();

  it('returns the newest entries oldest first and pages backwards, reading only what it returns', async () => {
    const id = randomProjectId();
    await world.control.createProject({ id, goal: 'x' });
    const { repository } = world;
    const ids: string[] = [];
    for (let turn = 1; turn <= 500; turn++) {
      ids.push(await repository.appendEvent(id, { v: 1, type: 'custom', at: turn, projectId: id }));
    }
    const monitor = await openCommandMonitor();
    try {
      const sent = await monitor.commandsSentBy(world.prefix, async () => {
        const newest = await world.control.readEvents(id, { last: 3 });
        expect(newest.map((entry) => entry.id)).toEqual(ids.slice(-3));
        const before = await world.control.readEvents(id, { last: 3, beforeId: newest[0]!.id });
        expect(before.map((entry) => entry.id)).toEqual(ids.slice(-6, -3));
      });
      expect(sent.map((entry) => [entry.command, entry.args.at(-1)])).toEqual([
        ['xrevrange', '3'],
        ['xrevrange', '3'],
      ]);
    } finally {
      monitor.close();
    }
    const first = await world.control.readEvents(id, { last: 10, beforeId: ids[2]! });
    expect(first.map((entry) => entry.id)).toEqual(ids.slice(0, 2));
  });

  it('refuses last with fromId, a bad last and beforeId alone', async () => {
    const id = randomProjectId();
    for (const options of [
      { last: 0 },
      { last: 2, fromId: '1-0' },
      { beforeId: '1-0' },
      { last: 2, beforeId: 'x' },
    ]) {
      const error = await world.control.readEvents(id, options).catch((caught: unknown) => caught);
      expect(isProjectError(error) && error.code === 'invalid_input', JSON.stringify(options)).toBe(
        true,
      );
    }
  });
});
