import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { deletePrefix, openCommandMonitor, REDIS_URL } from '@baton/test-support';
import {
  createBatonControl,
  createKeys,
  isProjectError,
  ProjectRepository,
  type BatonControl,
} from '../src/index.js';
import { randomPrefix, randomProjectId } from './support/redis.js';

describe('readEvents({ last })', () => {
  let prefix: string;
  let control: BatonControl;
  let redis: Redis;
  beforeEach(() => {
    prefix = randomPrefix();
    control = createBatonControl({ url: REDIS_URL, prefix });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    await control.close();
    redis.disconnect();
    await deletePrefix(prefix);
  });

  it('returns the newest entries oldest first and pages backwards, reading only what it returns', async () => {
    const id = randomProjectId();
    await control.createProject({ id, goal: 'x' });
    const repository = new ProjectRepository({ redis, keys: createKeys(prefix) });
    const ids: string[] = [];
    for (let turn = 1; turn <= 500; turn++) {
      ids.push(await repository.appendEvent(id, { v: 1, type: 'custom', at: turn, projectId: id }));
    }
    const monitor = await openCommandMonitor();
    try {
      const sent = await monitor.commandsSentBy(prefix, async () => {
        const newest = await control.readEvents(id, { last: 3 });
        expect(newest.map((entry) => entry.id)).toEqual(ids.slice(-3));
        const before = await control.readEvents(id, { last: 3, beforeId: newest[0]!.id });
        expect(before.map((entry) => entry.id)).toEqual(ids.slice(-6, -3));
      });
      expect(sent.map((entry) => [entry.command, entry.args.at(-1)])).toEqual([
        ['xrevrange', '3'],
        ['xrevrange', '3'],
      ]);
    } finally {
      monitor.close();
    }
    const first = await control.readEvents(id, { last: 10, beforeId: ids[2]! });
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
      const error = await control.readEvents(id, options).catch((caught: unknown) => caught);
      expect(isProjectError(error) && error.code === 'invalid_input', JSON.stringify(options)).toBe(
        true,
      );
    }
  });
});
