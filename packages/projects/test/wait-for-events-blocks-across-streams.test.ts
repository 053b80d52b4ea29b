import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deletePrefix, randomHex, REDIS_URL, waitFor } from '@baton/test-support';
import { Redis } from 'ioredis';
import {
  createBatonControl,
  createKeys,
  ProjectRepository,
  type BatonControl,
  type ProjectEvents,
} from '../src/index.js';
import { randomPrefix, randomProjectId } from './support/redis.js';

describe('waitForEvents', () => {
  let prefix: string;
  let connectionName: string;
  let shared: Redis;
  let control: BatonControl;
  let repository: ProjectRepository;

  beforeEach(() => {
    prefix = randomPrefix();
    // The waiting connection is a duplicate of this one and keeps its name, so the tests can see
    // in CLIENT LIST when the read is blocked in Redis.
    connectionName = `wait-${randomHex()}`;
    shared = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, connectionName });
    control = createBatonControl({ redis: shared, prefix });
    repository = new ProjectRepository({ redis: shared, keys: createKeys(prefix) });
  });

  afterEach(async () => {
    await control.close();
    shared.disconnect();
    await deletePrefix(prefix);
  });

  async function createProject(): Promise<{ id: string; cursor: string }> {
    const id = randomProjectId();
    await control.createProject({ id, goal: 'x' });
    const events = await control.readEvents(id);
    return { id, cursor: events.at(-1)?.id ?? '0-0' };
  }

  function append(projectId: string, label: string): Promise<string> {
    return repository.appendEvent(projectId, {
      v: 1,
      type: 'custom',
      at: Date.now(),
      projectId,
      label,
    } as Parameters<ProjectRepository['appendEvent']>[1]);
  }

  /** Resolves once a connection of this test is blocked in XREAD on the server. */
  function blockedInRedis(): Promise<boolean> {
    return waitFor('a blocked XREAD', async () => {
      const list = (await shared.call('CLIENT', 'LIST')) as string;
      return list
        .split('\n')
        .some(
          (line) =>
            line.includes(` name=${connectionName} `) &&
            / cmd=xread /.test(line) &&
            / flags=\S*b/.test(line),
        );
    });
  }

  const labels = (result: ProjectEvents[]) =>
    Object.fromEntries(
      result.map(({ projectId, entries }) => [
        projectId,
        // A `custom` event decodes as unknown and keeps what was written.
        entries.map(({ event }) =>
          event.type === 'unknown' ? (event.raw as { label?: string }).label : undefined,
        ),
      ]),
    );

  it('returns the new entries of several streams in one call, only for streams that have some', async () => {
    const [a, b, c] = [await createProject(), await createProject(), await createProject()];
    await append(a.id, 'a1');
    await append(c.id, 'c1');
    await append(a.id, 'a2');
    const result = await control.waitForEvents(
      { [a.id]: a.cursor, [b.id]: b.cursor, [c.id]: c.cursor },
      { blockMs: 1_000 },
    );
    expect(labels(result)).toEqual({ [a.id]: ['a1', 'a2'], [c.id]: ['c1'] });
    // blockMs 0 reads what is there without waiting.
    const last = result.find((item) => item.projectId === a.id)?.entries.at(-1)?.id ?? '';
    expect(await control.waitForEvents({ [a.id]: last, [b.id]: b.cursor }, { blockMs: 0 })).toEqual(
      [],
    );
    // count caps entries per stream.
    const capped = await control.waitForEvents({ [a.id]: a.cursor }, { blockMs: 0, count: 1 });
    expect(labels(capped)).toEqual({ [a.id]: ['a1'] });
  });

  it('blocks until an entry is appended to any of the streams, then resolves at once', async () => {
    const [a, b] = [await createProject(), await createProject()];
    let resolvedAt: number | undefined;
    const waiting = control
      .waitForEvents({ [a.id]: a.cursor, [b.id]: b.cursor }, { blockMs: 20_000 })
      .then((result) => {
        resolvedAt = Date.now();
        return result;
      });
    await blockedInRedis();
    expect(resolvedAt).toBeUndefined();
    const appendedAt = Date.now();
    await append(b.id, 'b1');
    const result = await waiting;
    expect(labels(result)).toEqual({ [b.id]: ['b1'] });
    expect(resolvedAt! - appendedAt).toBeLessThan(2_000);
  });

  it('resolves with [] when nothing arrives within blockMs', async () => {
    const a = await createProject();
    const started = Date.now();
    expect(await control.waitForEvents({ [a.id]: a.cursor }, { blockMs: 300 })).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('ends a pending wait with [] when the control closes or the signal aborts', async () => {
    const a = await createProject();
    const abort = new AbortController();
    const aborted = control.waitForEvents(
      { [a.id]: a.cursor },
      { blockMs: 30_000, signal: abort.signal },
    );
    await blockedInRedis();
    const abortedAt = Date.now();
    abort.abort();
    expect(await aborted).toEqual([]);
    expect(Date.now() - abortedAt).toBeLessThan(2_000);

    const pending = control.waitForEvents({ [a.id]: a.cursor }, { blockMs: 30_000 });
    await blockedInRedis();
    const closedAt = Date.now();
    await control.close();
    expect(await pending).toEqual([]);
    expect(Date.now() - closedAt).toBeLessThan(2_000);
    await expect(control.waitForEvents({ [a.id]: a.cursor }, { blockMs: 10 })).rejects.toThrow(
      /closed/,
    );
  });

  it('rejects invalid project ids and cursors', async () => {
    await expect(control.waitForEvents({ 'bad id': '0-0' }, { blockMs: 10 })).rejects.toThrow(
      /invalid project id/,
    );
    const a = await createProject();
    await expect(control.waitForEvents({ [a.id]: '$' }, { blockMs: 10 })).rejects.toThrow(
      /invalid stream id/,
    );
    await expect(control.waitForEvents({ [a.id]: a.cursor }, { blockMs: -1 })).rejects.toThrow(
      /blockMs/,
    );
  });
});
