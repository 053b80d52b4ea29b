import type { SessionSummary } from '@baton/projects';
import { describe, expect, it } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

const TIP = 'a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0';

/** A finished session whose checkpoint took the branch back from a replaced session's push. */
function summaryOf(id: string): SessionSummary {
  return {
    sessionId: 's-2',
    sessionNumber: 2,
    kind: 'resume',
    outcome: 'completed',
    reason: 'end_turn',
    interrupted: false,
    turns: 3,
    inputTokens: 10,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    outputTokens: 5,
    clearedInputTokens: 0,
    costUsd: 0,
    featuresBefore: { passing: 0, total: 1 },
    featuresAfter: { passing: 1, total: 1 },
    flippedFeatures: ['F1'],
    startedAt: 1,
    endedAt: 2,
    jobId: `${id}@2`,
    workerId: 'worker-b',
    commits: [],
    model: 'sim',
    replacedStale: [
      { tip: TIP, fence: 5, commits: 2, keptOn: `baton-kept/${id}/5-${TIP.slice(0, 12)}` },
    ],
  };
}

describe("baton status names the side branch a replaced session's late push was kept on", () => {
  it('in its text and in --json', async () => {
    const { redis } = world;
    const id = redis.projectId('kept');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.repository.recordSessionEnd(id, summaryOf(id), { failed: false });

    const text = await world.cli(['status', id]);
    expect(text.stderr).toBe('');
    expect(text.stdout).toContain(
      `kept aside in session 2: a replaced session's late push (fence 5, 2 commits, tip ${TIP.slice(0, 12)}) was taken off the branch and kept on baton-kept/${id}/5-${TIP.slice(0, 12)}; merge what you want from it, then delete it`,
    );

    const json = await world.cli(['status', id, '--json']);
    const status = JSON.parse(json.stdout) as {
      sessionCommits: Array<{ sessionNumber: number; replacedStale: unknown[] }>;
    };
    expect(status.sessionCommits).toEqual([
      expect.objectContaining({
        sessionNumber: 2,
        replacedStale: [
          { tip: TIP, fence: 5, commits: 2, keptOn: `baton-kept/${id}/5-${TIP.slice(0, 12)}` },
        ],
      }),
    ]);
  });
});
