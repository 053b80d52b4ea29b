import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { deletePrefix, REDIS_URL, waitFor } from '@baton/test-support';
import {
  ProjectRepository,
  acquireProjectLease,
  createKeys,
  isProjectError,
  type ProjectLease,
} from '../src/index.js';
import { newProjectRecord, sessionSummary } from './support/project-log-conformance.js';
import { randomPrefix, randomProjectId } from './support/redis.js';

describe("fencing: a session's writes to its project need its lease", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function world() {
    const prefix = randomPrefix();
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => {
      redis.disconnect();
      await deletePrefix(prefix);
    });
    const keys = createKeys(prefix);
    const repository = new ProjectRepository({ redis, keys });
    const take = async (projectId: string, ttlMs: number): Promise<ProjectLease> => {
      const claim = await acquireProjectLease({ redis, keys, ttlMs }, projectId);
      if (!claim.acquired) throw new Error('lease busy');
      return claim.lease;
    };
    return { redis, keys, repository, take };
  }

  it('every write of the replaced session is refused and reported; the new holder writes', async () => {
    const { redis, keys, repository, take } = await world();
    const id = randomProjectId('fenced');
    await repository.create(newProjectRecord(id));
    const oldLease = await take(id, 200);
    let refusals = 0;
    const old = repository.fenced(id, { token: oldLease.fence, onFenced: () => (refusals += 1) });
    expect((await old.transition(id, 'running')).ok).toBe(true);
    const active = { sessionId: 's1', sessionNumber: 1, jobId: 'j1', workerId: 'a', startedAt: 1 };
    await old.markSessionStart(id, active, false);

    // The old session is cut off: its lease expires and another session takes the project.
    await waitFor('old lease expired', async () => (await redis.exists(keys.lease(id))) === 0);
    const newLease = await take(id, 10_000);
    const current = repository.fenced(id, { token: newLease.fence });
    await current.markSessionStart(id, { ...active, sessionId: 's2', workerId: 'b' }, true);
    const eventsBefore = (await repository.readEvents(id, { count: 1000 })).length;

    const attempts: [string, () => Promise<unknown>][] = [
      ['recordSessionEnd', () => old.recordSessionEnd(id, sessionSummary(), { failed: false })],
      ['transition', () => old.transition(id, 'completed')],
      ['setLastCheckpoint', () => old.setLastCheckpoint(id, 'f'.repeat(40))],
      ['appendEvent', () => old.appendEvent(id, { v: 1, type: 'late', at: 2, projectId: id })],
      ['markSessionStart', () => old.markSessionStart(id, active, false)],
    ];
    for (const [what, attempt] of attempts) {
      const error = await attempt().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(isProjectError(error) && error.code === 'fenced', what).toBe(true);
      expect((error as Error).message, what).toMatch(/no longer holds project/);
    }
    expect(refusals).toBe(attempts.length);
    const project = await repository.require(id);
    expect(project.status).toBe('running');
    expect(project.activeSession?.sessionId).toBe('s2');
    expect(project.counters.sessions).toBe(0);
    expect(project.lastCheckpoint).toBeNull();
    expect(await repository.listSessions(id)).toEqual([]);
    expect((await repository.readEvents(id, { count: 1000 })).length).toBe(eventsBefore);

    // The holder's writes land, in one step each.
    await current.recordSessionEnd(id, sessionSummary({ sessionId: 's2' }), { failed: false });
    expect((await current.transition(id, 'completed')).ok).toBe(true);
    expect((await repository.require(id)).counters.sessions).toBe(1);
    await newLease.release();
  });

  it('a fenced view writes only the project it holds, and control calls stay unfenced', async () => {
    const { repository, take } = await world();
    const id = randomProjectId('fenced');
    const other = randomProjectId('other');
    await repository.create(newProjectRecord(id));
    await repository.create(newProjectRecord(other));
    const lease = await take(id, 10_000);
    const view = repository.fenced(id, { token: lease.fence });
    await expect(view.setLastCheckpoint(other, 'a'.repeat(40))).rejects.toThrow(
      /tried to write project/,
    );
    // No lease on `other`: an operator's move is not fenced.
    expect((await repository.transition(other, 'paused')).ok).toBe(true);
    await lease.release();
  });
});
