import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deletePrefix, REDIS_URL } from '@baton/test-support';
import type { TranscriptHeader, TranscriptMessage } from '@baton/session';
import {
  ProjectRepository,
  createKeys,
  createRedisTranscripts,
  type BatonKeys,
} from '../src/index.js';
import { randomPrefix, randomProjectId } from './support/redis.js';

function header(projectId: string, sessionId: string, startedAt: number): TranscriptHeader {
  return {
    projectId,
    sessionId,
    sessionNumber: startedAt,
    kind: 'resume',
    model: 'sim',
    interrupted: false,
    startedAt,
  };
}

const message = (turn: number, text: string): TranscriptMessage => ({
  role: 'assistant',
  turn,
  phase: 'work',
  at: turn,
  content: [{ type: 'text', text, source: 'model' }],
});

describe('transcripts in Redis', () => {
  let prefix: string;
  let keys: BatonKeys;
  let redis: Redis;

  beforeEach(() => {
    prefix = randomPrefix();
    keys = createKeys(prefix);
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    redis.disconnect();
    await deletePrefix(prefix);
  });

  it('keeps each session as header, messages and end under the project keys, and lists without messages', async () => {
    const projectId = randomProjectId();
    const store = createRedisTranscripts({ redis, keys, projectId });
    await store.start(header(projectId, 's-1', 1));
    await store.append('s-1', [message(1, 'first')]);
    await store.append('s-1', [message(2, 'second')]);
    await store.end('s-1', {
      endedAt: 9,
      outcome: 'completed',
      reason: 'done',
      turns: 2,
      costUsd: 0,
    });
    // A session that never ended (its worker was killed) keeps what it wrote.
    await store.start(header(projectId, 's-2', 2));
    await store.append('s-2', [message(1, 'only')]);

    expect(await redis.exists(keys.transcript(projectId, 's-1'))).toBe(1);
    expect(keys.transcript(projectId, 's-1').startsWith(`${prefix}:project:${projectId}:`)).toBe(
      true,
    );
    const full = await store.read('s-1');
    expect(full?.messages.map((entry) => entry.content[0])).toEqual([
      { type: 'text', text: 'first', source: 'model' },
      { type: 'text', text: 'second', source: 'model' },
    ]);
    expect(full?.end).toMatchObject({ outcome: 'completed', turns: 2 });
    expect(await store.list()).toEqual([
      expect.objectContaining({ sessionId: 's-1', messageCount: 2, end: expect.anything() }),
      expect.objectContaining({ sessionId: 's-2', messageCount: 1, end: null }),
    ]);
    expect(await store.read('s-3')).toBeNull();
    expect(await store.read('{other}')).toBeNull();
  });

  it('keeps the latest sessions only, and goes when the project is deleted', async () => {
    const projectId = randomProjectId();
    const store = createRedisTranscripts({ redis, keys, projectId, keep: 2 });
    for (const number of [1, 2, 3]) {
      await store.start(header(projectId, `s-${number}`, number));
      await store.append(`s-${number}`, [message(1, `session ${number}`)]);
    }
    expect((await store.list()).map((entry) => entry.sessionId)).toEqual(['s-2', 's-3']);
    expect(await redis.exists(keys.transcript(projectId, 's-1'))).toBe(0);

    await new ProjectRepository({ redis, keys }).delete(projectId);
    expect(await redis.exists(keys.transcripts(projectId))).toBe(0);
    expect(await redis.exists(keys.transcript(projectId, 's-3'))).toBe(0);
    expect(await store.list()).toEqual([]);
  });
});
