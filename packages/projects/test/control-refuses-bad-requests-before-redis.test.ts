import { describe, expect, it } from 'vitest';
import { openCommandMonitor } from '@baton/test-support';
import { isProjectError } from '../src/index.js';
import { randomProjectId, useControlWorld } from './support/redis.js';

/** The one line a refused call fails with, or a note that it did not fail as `invalid_input`. */
async function refusal(call: () => Promise<unknown>): Promise<string> {
  const outcome = await call().then(
    () => 'accepted',
    (error: unknown) => error,
  );
  if (isProjectError(outcome) && outcome.code === 'invalid_input') return outcome.message;
  return `not invalid_input: ${outcome instanceof Error ? outcome.message : String(outcome)}`;
}

describe('the control API parses each request once, before Redis', () => {
  const world = useControlWorld();

  it('refuses read options the request schemas refuse, naming the field, with nothing sent', async () => {
    const id = randomProjectId();
    await world.control.createProject({ id, goal: 'x' });
    await world.repository.appendEvent(id, { v: 1, type: 'custom', at: 1, projectId: id });
    const { control } = world;
    const cases: [string, () => Promise<unknown>, RegExp][] = [
      // These reached Redis before the control parsed its options with one schema.
      [
        'readEvents fromId',
        () => control.readEvents(id, { fromId: 'garbage' }),
        /^invalid event read: fromId: must be a stream id/,
      ],
      [
        'readEvents count',
        () => control.readEvents(id, { count: 0 }),
        /^invalid event read: count: must be an integer >= 1, got 0$/,
      ],
      [
        'readEvents blockMs',
        () => control.readEvents(id, { blockMs: -5 }),
        /^invalid event read: blockMs: must be an integer >= 0, got -5$/,
      ],
      [
        'search limit',
        () => control.search(id, 'x', { limit: 0 }),
        /^invalid search options: limit: must be an integer >= 1, got 0$/,
      ],
      [
        'search context',
        () => control.search(id, 'x', { context: 1.5 }),
        /^invalid search options: context: must be an integer >= 0, got 1.5$/,
      ],
      // And the ones it checked by hand, now by the same schemas.
      [
        'readEvents last with fromId',
        () => control.readEvents(id, { last: 2, fromId: '1-0' }),
        /last: reads backwards: give no fromId or blockMs/,
      ],
      [
        'pageSessions limit',
        () => control.pageSessions(id, { limit: 1_001 }),
        /^invalid session window: limit: must be an integer 1-1000, got 1001$/,
      ],
      [
        'projectChanges version',
        () => control.projectChanges(-1),
        /^invalid change feed read: version: must be an integer >= 0, got -1$/,
      ],
      [
        'memoryHistory limit',
        () => control.memoryHistory(id, 'progress.md', { limit: Number.NaN }),
        /^invalid history read: limit: must be an integer >= 1, got NaN$/,
      ],
      [
        'readTranscript session id',
        () => control.readTranscript(id, '../x'),
        /^invalid session id: must be up to 128 letters/,
      ],
      ['search text', () => control.search(id, '   '), /^invalid search text: must not be empty$/],
    ];
    const monitor = await openCommandMonitor();
    try {
      const sent = await monitor.commandsSentBy(world.prefix, async () => {
        for (const [label, call, expected] of cases) {
          expect(await refusal(call), label).toMatch(expected);
        }
      });
      expect(sent).toEqual([]);
    } finally {
      monitor.close();
    }
  });

  it('refuses a follow from a bad stream id when it is asked for, not on the first read', async () => {
    const id = randomProjectId();
    expect(await refusal(async () => world.control.followEvents(id, { fromId: 'nope' }))).toMatch(
      /^invalid event follow: fromId: /,
    );
    expect(await refusal(async () => world.control.followEvents(id, { count: 0 }))).toBe(
      'invalid event follow: count: must be an integer >= 1, got 0',
    );
    // `$` (new events only) is a follow's own start.
    const follow = world.control.followEvents(id, { fromId: '$', blockMs: 10 });
    expect(typeof follow[Symbol.asyncIterator]).toBe('function');
  });
});
