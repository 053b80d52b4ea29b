/**
 * Session summaries stored before prompt caching (no cache counts) and before fallback models (no
 * model) are upgraded once, in Redis by `runRedisMigrations` and under `BATON_HOME` by
 * `openFileProjectLog`; readers take `SessionSummary` as it is. The old shapes are written raw.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createFileProjectLog,
  openFileProjectLog,
  runRedisMigrations,
  type SessionSummary,
} from '../src/index.js';
import { newProjectRecord, sessionSummary } from './support/project-log-conformance.js';
import { useControlWorld } from './support/redis.js';

const MIGRATION = '2026-12-04-session-summary-fields';
const FILE_MIGRATION = '2026-12-04-local-session-summary-fields';

/** `summary` as a version before caching and fallback models stored it. */
function stored(summary: SessionSummary): string {
  const { cacheReadInputTokens, cacheCreationInputTokens, model, ...older } = summary;
  void [cacheReadInputTokens, cacheCreationInputTokens, model];
  return JSON.stringify(older);
}

/** What the migration makes of `summary` stored the old way, with the model it found. */
function upgraded(summary: SessionSummary, model: string): SessionSummary {
  return { ...summary, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, model };
}

function sessionStart(sessionId: string, model: string): string {
  return JSON.stringify({
    type: 'session-start',
    sessionId,
    kind: 'init',
    sessionNumber: 1,
    model,
  });
}

describe('session summaries stored before caching and fallback models', () => {
  const world = useControlWorld();

  it('get their cache counts and model once in Redis, and readers see them as stored', async () => {
    await world.control.createProject({ id: 'plain', goal: 'Old sessions' });
    await world.control.createProject({ id: 'pinned', goal: 'Old sessions', model: 'sim-opus' });
    const { keys } = world.control;
    const started = sessionSummary({ sessionId: 's1', sessionNumber: 1 });
    const unnamed = sessionSummary({ sessionId: 's2', sessionNumber: 2 });
    const current = sessionSummary({ sessionId: 's3', sessionNumber: 3, model: 'sim-sonnet' });
    const pinned = sessionSummary({ sessionId: 'p1', sessionNumber: 1 });
    await world.redis.rpush(
      keys.sessions('plain'),
      stored(started),
      stored(unnamed),
      JSON.stringify(current),
    );
    await world.redis.rpush(keys.sessions('pinned'), stored(pinned));
    await world.redis.xadd(keys.events('plain'), '*', 'e', sessionStart('s1', 'sim-haiku'));
    // The prefix was fresh, so every migration was recorded as applied: this one was not yet.
    await world.redis.hdel(keys.migrations, MIGRATION);

    // Readers have no defaults: before the migration the summaries read as malformed.
    const before = await world.control.listSessions('plain');
    expect(before[0]?.outcome).toBe('malformed');
    expect(before[0]?.malformed).toMatch(/^(model|cacheReadInputTokens): /);

    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([MIGRATION]);
    expect(await world.control.listSessions('plain')).toEqual([
      upgraded(started, 'sim-haiku'),
      upgraded(unnamed, 'unrecorded'),
      current,
    ]);
    expect(await world.control.listSessions('pinned')).toEqual([upgraded(pinned, 'sim-opus')]);
    // The summary already in the current shape is left byte for byte.
    expect(await world.redis.lindex(keys.sessions('plain'), 2)).toBe(JSON.stringify(current));

    // Once: a summary stored the old way afterwards stays as it is.
    await world.redis.rpush(keys.sessions('pinned'), stored(pinned));
    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([]);
    expect((await world.control.listSessions('pinned'))[1]?.malformed).toMatch(
      /^(model|cacheReadInputTokens): /,
    );
  });

  it('get their cache counts and model once under BATON_HOME', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'baton-summaries-'));
    try {
      const log = await openFileProjectLog({ home });
      await log.create({ ...newProjectRecord('old'), model: 'sim-opus' });
      const dir = path.join(home, 'projects', 'old');
      const started = sessionSummary({ sessionId: 's1', sessionNumber: 1 });
      const unnamed = sessionSummary({ sessionId: 's2', sessionNumber: 2 });
      const current = sessionSummary({ sessionId: 's3', sessionNumber: 3 });
      await writeFile(
        path.join(dir, 'sessions.jsonl'),
        `${stored(started)}\n${stored(unnamed)}\n${JSON.stringify(current)}\n`,
      );
      await writeFile(path.join(dir, 'events.jsonl'), `${sessionStart('s1', 'sim-haiku')}\n`);
      const migrations = path.join(home, 'migrations.json');
      const applied = (JSON.parse(await readFile(migrations, 'utf8')) as { applied: string[] })
        .applied;
      expect(applied).toContain(FILE_MIGRATION);
      await writeFile(
        migrations,
        JSON.stringify({ applied: applied.filter((id) => id !== FILE_MIGRATION) }),
      );

      const before = await createFileProjectLog({ home }).listSessions('old');
      expect(before[1]?.malformed).toMatch(/^(model|cacheReadInputTokens): /);
      expect(await (await openFileProjectLog({ home })).listSessions('old')).toEqual([
        upgraded(started, 'sim-haiku'),
        upgraded(unnamed, 'sim-opus'),
        current,
      ]);

      // Once: a line written the old way afterwards stays as it is.
      await writeFile(path.join(dir, 'sessions.jsonl'), `${stored(unnamed)}\n`);
      const again = await (await openFileProjectLog({ home })).listSessions('old');
      expect(again[0]?.malformed).toMatch(/^(model|cacheReadInputTokens): /);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
