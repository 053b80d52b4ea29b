import { describe, expect, it } from 'vitest';
import { isProjectError, type SessionSummary } from '../src/index.js';
import { randomProjectId, useControlWorld } from './support/redis.js';

function summary(sessionNumber: number): SessionSummary {
  return {
    sessionId: `s${sessionNumber}`,
    sessionNumber,
    kind: 'resume',
    outcome: 'end_turn',
    reason: 'done',
    interrupted: false,
    turns: 1,
    inputTokens: 1,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    outputTokens: 1,
    clearedInputTokens: 0,
    costUsd: 0,
    featuresBefore: { passing: 0, total: 1 },
    featuresAfter: { passing: 0, total: 1 },
    flippedFeatures: [],
    startedAt: 1,
    endedAt: 2,
    jobId: 'j',
    workerId: 'w',
    model: 'sim-sonnet',
    commits: [],
  };
}

describe('pageSessions', () => {
  const world = useControlWorld();

  it('returns the newest window and pages backwards with a cursor that holds as sessions end', async () => {
    const id = randomProjectId();
    await world.control.createProject({ id, goal: 'x' });
    const { repository } = world;
    for (let number = 1; number <= 12; number++) {
      await repository.recordSessionEnd(id, summary(number), { failed: false });
    }
    const newest = await world.control.pageSessions(id, { limit: 5 });
    expect(newest.sessions.map((session) => session.sessionNumber)).toEqual([8, 9, 10, 11, 12]);
    expect(newest).toMatchObject({ startIndex: 7, total: 12 });
    // Two more sessions end: the older window is the same.
    await repository.recordSessionEnd(id, summary(13), { failed: false });
    await repository.recordSessionEnd(id, summary(14), { failed: false });
    const older = await world.control.pageSessions(id, {
      limit: 5,
      beforeIndex: newest.startIndex,
    });
    expect(older.sessions.map((session) => session.sessionNumber)).toEqual([3, 4, 5, 6, 7]);
    const oldest = await world.control.pageSessions(id, {
      limit: 5,
      beforeIndex: older.startIndex,
    });
    expect(oldest.sessions.map((session) => session.sessionNumber)).toEqual([1, 2]);
    expect(oldest.startIndex).toBe(0);
    const error = await world.control
      .pageSessions(id, { limit: 0 })
      .catch((caught: unknown) => caught);
    expect(isProjectError(error) && error.code === 'invalid_input').toBe(true);
  });
});
