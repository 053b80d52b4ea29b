import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { deletePrefix, REDIS_URL, waitFor } from '@baton/test-support';
import {
  ProjectRepository,
  acquireProjectLease,
  createKeys,
  createRedisGuidance,
  createRedisTranscripts,
  isProjectError,
  startLeaseHeartbeat,
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

  it("the replaced session's transcript and guidance acknowledgements are refused too", async () => {
    const { repository, take } = await world();
    const { redis, keys } = repository;
    const id = randomProjectId('fenced');
    await repository.create(newProjectRecord(id));
    const oldLease = await take(id, 200);
    let refusals = 0;
    const oldFence = { token: oldLease.fence, onFenced: () => (refusals += 1) };
    const oldTranscripts = createRedisTranscripts({ redis, keys, projectId: id, fence: oldFence });
    const header = {
      projectId: id,
      sessionId: 's-old',
      sessionNumber: 1,
      kind: 'init' as const,
      model: 'sim',
      interrupted: false,
      startedAt: 1,
    };
    await oldTranscripts.start(header);
    const message = (text: string) => ({
      role: 'assistant' as const,
      turn: 1,
      phase: 'work' as const,
      at: 2,
      content: [{ type: 'text' as const, text, source: 'model' as const }],
    });
    await oldTranscripts.append('s-old', [message('before the cut')]);
    const guidance = createRedisGuidance({ redis, keys, projectId: id });
    const said = await guidance.add('use tabs');
    const oldGuidance = createRedisGuidance({ redis, keys, projectId: id, fence: oldFence });

    await waitFor('old lease expired', async () => (await redis.exists(keys.lease(id))) === 0);
    const newLease = await take(id, 10_000);

    const attempts: [string, () => Promise<unknown>][] = [
      ['append', () => oldTranscripts.append('s-old', [message('after the cut')])],
      [
        'end',
        () =>
          oldTranscripts.end('s-old', {
            endedAt: 3,
            outcome: 'completed',
            reason: 'x',
            turns: 1,
            costUsd: 0,
          }),
      ],
      ['start', () => oldTranscripts.start({ ...header, sessionId: 's-late' })],
      ['acknowledge', () => oldGuidance.acknowledge([said.id], { sessionId: 's-old', turn: 1 })],
    ];
    for (const [what, attempt] of attempts) {
      const error = await attempt().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(isProjectError(error) && error.code === 'fenced', what).toBe(true);
    }
    expect(refusals).toBe(attempts.length);
    const reader = createRedisTranscripts({ redis, keys, projectId: id });
    const kept = await reader.read('s-old');
    expect(kept?.messages.map((entry) => entry.content[0])).toEqual([
      expect.objectContaining({ text: 'before the cut' }),
    ]);
    expect(kept?.end).toBeNull();
    expect(await reader.read('s-late')).toBeNull();
    // The guidance is still unseen: the session that will act on it is the new holder.
    expect(await guidance.pending()).toEqual([{ id: said.id, at: said.at, text: 'use tabs' }]);

    // The holder's writes land.
    const current = { token: newLease.fence };
    await createRedisGuidance({ redis, keys, projectId: id, fence: current }).acknowledge(
      [said.id],
      { sessionId: 's-new', turn: 1 },
    );
    expect(await guidance.pending()).toEqual([]);
    await newLease.release();
  });

  it('a holder cut off from Redis is told its lease expired once the TTL passed, without an answer', async () => {
    const { take } = await world();
    const id = randomProjectId('watchdog');
    const lease = await take(id, 600);
    // Every renewal hangs, as over a stalled link: only the local clock can say the lease is gone.
    const stalled: ProjectLease = {
      ...lease,
      validUntil: lease.validUntil,
      renew: () => new Promise(() => undefined),
    };
    const started = performance.now();
    const lost = await new Promise<{ why: string; at: number }>((resolve) => {
      startLeaseHeartbeat(stalled, {
        intervalMs: 150,
        onLost: (why) => resolve({ why, at: performance.now() }),
      });
    });
    expect(lost.why).toBe('expired');
    expect(lost.at).toBeGreaterThanOrEqual(lease.validUntil);
    expect(lost.at - started).toBeLessThan(600 + 1_000);
  });

  it('a renewal that answers late, while the lease still lived, keeps it', async () => {
    const { take } = await world();
    const id = randomProjectId('stall');
    const lease = await take(id, 1_000);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let renewals = 0;
    let heldOnce: () => void = () => undefined;
    const renewedAfterStall = new Promise<void>((resolve) => (heldOnce = resolve));
    const slow: ProjectLease = {
      ...lease,
      get validUntil() {
        return lease.validUntil;
      },
      renew: async () => {
        renewals += 1;
        if (renewals === 1) await gate;
        const answer = await lease.renew();
        if (renewals === 2) heldOnce();
        return answer;
      },
    };
    let lostWhy: string | undefined;
    const heartbeat = startLeaseHeartbeat(slow, {
      intervalMs: 100,
      onLost: (why) => (lostWhy = why),
    });
    // The first renewal hangs for 600 ms (a stall shorter than the 1 s TTL), then goes through.
    setTimeout(release, 600);
    await renewedAfterStall;
    heartbeat.stop();
    expect(lostWhy).toBeUndefined();
    expect(await lease.holds()).toBe(true);
    await lease.release();
  });
});
