/**
 * Turns, session starts, session results and check evidence written before a field existed are
 * upgraded once (Redis `2026-12-04-event-fields` by `runRedisMigrations`, `BATON_HOME`
 * `2026-12-04-local-event-fields` by `openFileProjectLog`) with every entry id kept; the decoder
 * has no defaults for them any more, so before the migration they read as malformed. The old
 * shapes are written raw.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createFileProjectLog,
  openFileProjectLog,
  isProjectError,
  runRedisMigrations,
  type EventEntry,
} from '../src/index.js';
import { COPY_TTL_MS } from '../src/migrations/event-rewrite.js';
import { scripts } from '../src/internal/scripts.js';
import { SCRIPT_STATUS } from '../src/internal/status.js';
import { PRE_SANDBOX } from '../src/migrations/event-fields.js';
import { newProjectRecord } from './support/project-log-conformance.js';
import { proxied, useControlWorld } from './support/redis.js';

const MIGRATION = '2026-12-04-event-fields';
const FILE_MIGRATION = '2026-12-04-local-event-fields';

const at = 1_700_000_000_000;
const zeroTotals = {
  turns: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheWrite5mInputTokens: 0,
  cacheWrite1hInputTokens: 0,
  clearedInputTokens: 0,
  clearedToolUses: 0,
  clearedThinkingTurns: 0,
  cacheInvalidatedInputTokens: 0,
  costUsd: 0,
};
const usageBeforeTtls = {
  inputTokens: 10,
  outputTokens: 20,
  cacheReadInputTokens: 30,
  cacheCreationInputTokens: 40,
};

/** Events of project `projectId` as the first versions wrote them, and what each becomes. */
function oldEvents(projectId: string) {
  const session = (sessionId: string) => ({ v: 1, at, projectId, sessionId });
  const start = {
    ...session('s1'),
    type: 'session-start',
    kind: 'init',
    sessionNumber: 1,
    model: 'sim-haiku',
  };
  const turn = (sessionId: string) => ({
    ...session(sessionId),
    type: 'turn',
    turn: 1,
    stopReason: 'end_turn',
    durationMs: 9,
    usage: usageBeforeTtls,
    costUsd: 0.1,
    totals: { inputTokens: 10, outputTokens: 20, costUsd: 0.1 },
  });
  const evidence = {
    featureId: 'F1',
    command: 'npm test',
    passed: true,
    durationMs: 4,
    at,
    trigger: 'flip',
  };
  const result = {
    sessionId: 's1',
    kind: 'init',
    outcome: 'completed',
    turns: 1,
    startedAt: at,
    endedAt: at + 1,
    checks: { F1: { status: 'verified', evidence } },
    verification: {
      verified: 1,
      claimed: 0,
      regressed: 0,
      unverified: 0,
      pending: 0,
      rerun: 0,
      rerunMs: 0,
    },
  };
  const filledEvidence = {
    ...evidence,
    exitCode: null,
    outputTail: '',
    commit: null,
    sessionId: '',
  };
  const filledTurn = (sessionId: string, model: string) => ({
    ...turn(sessionId),
    phase: 'work',
    appliedEdits: [],
    clearedInputTokens: 0,
    cacheInvalidation: null,
    model,
    responseModel: model,
    // Without the breakdown every cache write counts as 5-minute, as the usage accumulator does.
    usage: { ...usageBeforeTtls, cacheWrite5mInputTokens: 40, cacheWrite1hInputTokens: 0 },
    totals: { ...zeroTotals, inputTokens: 10, outputTokens: 20, costUsd: 0.1 },
  });
  return {
    stored: [
      start,
      turn('s1'),
      // Session s0's start was trimmed from the stream: its turn takes the project's model.
      turn('s0'),
      { ...session('s1'), type: 'check-passed', evidence },
      { ...session('s1'), type: 'session-end', result },
    ],
    upgraded: [
      { ...start, interrupted: false, sandbox: PRE_SANDBOX },
      filledTurn('s1', 'sim-haiku'),
      filledTurn('s0', 'sim-opus'),
      { ...session('s1'), type: 'check-passed', evidence: filledEvidence },
      {
        ...session('s1'),
        type: 'session-end',
        result: {
          ...result,
          reason: '',
          usage: zeroTotals,
          featuresBefore: { passing: 0, total: 0 },
          featuresAfter: { passing: 0, total: 0 },
          allFeaturesPass: false,
          flippedFeatures: [],
          commits: [],
          progressEntry: 'none',
          checks: { F1: { status: 'verified', evidence: filledEvidence } },
          verification: { ...result.verification, regressedIds: [] },
        },
      },
    ],
  };
}

/** A session-start stored with its `interrupted` (its default is not this migration's). */
function withInterrupted(events: Array<Record<string, unknown>>) {
  return events.map((event) =>
    event.type === 'session-start' ? { ...event, interrupted: false } : event,
  );
}

/** The id after which XADD hands out new ones. */
async function lastGeneratedId(key: string): Promise<unknown> {
  const info = (await world.redis.xinfo('STREAM', key)) as unknown[];
  return info[info.indexOf('last-generated-id') + 1];
}

/** The swap script as a runner holding the migration lock with token `held` calls it. */
async function swap(key: string, copy: string, last: string, token = 'held') {
  const lock = world.control.keys.migrationLock;
  if (token === 'held') await world.redis.set(lock, 'held');
  return scripts.call(world.redis, 'replaceStream', key, copy, lock, last, token);
}

/** Project `id` with the old events of `oldEvents` in its stream, the migration not applied. */
async function storeOldEvents(id: string) {
  await world.control.createProject({ id, goal: 'Old events', model: 'sim-opus' });
  const { keys } = world.control;
  const key = keys.events(id);
  const { stored, upgraded } = oldEvents(id);
  const ids = ['1000-0', '1000-1', '2000-0', '2000-5', '3000-0'];
  for (const [index, event] of withInterrupted(stored).entries()) {
    await world.redis.xadd(key, ids[index]!, 'e', JSON.stringify(event));
  }
  await world.redis.hdel(keys.migrations, MIGRATION);
  return { keys, key, upgraded: upgraded.map((event, index) => ({ id: ids[index], event })) };
}

const swapCommand = scripts.script('replaceStream').command;

function decoded(entries: EventEntry[]) {
  return entries.map(({ id, event }) => ({ id, event }));
}

const world = useControlWorld();

describe('events stored before a field of turns, starts, results and checks existed', () => {
  it('get what its absence meant once in Redis, with every entry id kept', async () => {
    await world.control.createProject({ id: 'old', goal: 'Old events', model: 'sim-opus' });
    const { keys } = world.control;
    const key = keys.events('old');
    const { stored, upgraded } = oldEvents('old');
    const ids = ['1000-0', '1000-1', '2000-0', '2000-5', '3000-0'];
    for (const [index, event] of withInterrupted(stored).entries()) {
      await world.redis.xadd(key, ids[index]!, 'e', JSON.stringify(event));
    }
    // An entry that is no event stays as it is; the stream's last id is past a deleted entry.
    await world.redis.xadd(key, '4000-0', 'e', 'not json');
    await world.redis.xadd(key, '5000-0', 'e', '{}');
    await world.redis.xdel(key, '5000-0');
    // Another runner's copy (or one left by a run cut short) is neither taken nor deleted.
    const other = `${key}:upgrade:other`;
    await world.redis.xadd(other, '1-0', 'e', '{}');
    await world.redis.hdel(keys.migrations, MIGRATION);

    // No defaults on read: before the migration the old entries read as malformed.
    const before = await world.control.readEvents('old', { count: 10 });
    expect(before.map(({ event }) => event.type)).toEqual(Array(6).fill('unknown'));

    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([MIGRATION]);
    const after = await world.control.readEvents('old', { count: 10 });
    expect(decoded(after).slice(0, 5)).toEqual(
      upgraded.map((event, index) => ({ id: ids[index], event })),
    );
    expect(after[5]).toMatchObject({ id: '4000-0', event: { type: 'unknown', raw: 'not json' } });
    expect(await world.redis.keys(`${key}:upgrade*`)).toEqual([other]);
    // The stream's last id stays past the deleted entry: no id is handed out twice.
    expect(await lastGeneratedId(key)).toBe('5000-0');

    // Run again: nothing is in an earlier shape, so the stream is left as it is.
    const settled = await world.redis.xrange(key, '-', '+');
    await world.redis.hdel(keys.migrations, MIGRATION);
    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([MIGRATION]);
    expect(await world.redis.xrange(key, '-', '+')).toEqual(settled);
    expect(await world.redis.keys(`${key}:upgrade*`)).toEqual([other]);
  });

  it('copies the tail appended while the copy was made, and swaps then, ids kept', async () => {
    await world.control.createProject({ id: 'tail', goal: 'Busy events', model: 'sim-opus' });
    const { keys } = world.control;
    const key = keys.events('tail');
    const { stored, upgraded } = oldEvents('tail');
    const ids = ['1000-0', '1000-1', '2000-0', '2000-5', '3000-0'];
    for (const [index, event] of withInterrupted(stored).entries()) {
      await world.redis.xadd(key, ids[index]!, 'e', JSON.stringify(event));
    }
    await world.redis.hdel(keys.migrations, MIGRATION);
    // Just before the first swap an appender adds one event in the current shape.
    let swaps = 0;
    const redis = proxied(world.redis, {
      [swapCommand]: async (real, ...args) => {
        swaps += 1;
        if (swaps === 1) await world.redis.xadd(key, '9000-0', 'e', JSON.stringify(upgraded[0]));
        return real(...args);
      },
    });

    expect(await runRedisMigrations({ redis, keys })).toEqual([MIGRATION]);
    expect(swaps).toBe(2);
    const after = await world.control.readEvents('tail', { count: 10 });
    expect(decoded(after)).toEqual([
      ...upgraded.map((event, index) => ({ id: ids[index], event })),
      { id: '9000-0', event: upgraded[0] },
    ]);
    expect(await world.redis.keys(`${key}:upgrade*`)).toEqual([]);
  });

  it('leaves no lasting copy when a run is killed mid-copy, and the next run migrates whole', async () => {
    const { keys, key, upgraded } = await storeOldEvents('killed');
    // The run dies after its copy is written: neither its swap nor its clean-up reaches Redis.
    const killed = new Error('killed');
    const dying = proxied(world.redis, {
      [swapCommand]: () => Promise.reject(killed),
      del: () => Promise.reject(killed),
    });
    await expect(runRedisMigrations({ redis: dying, keys })).rejects.toBe(killed);
    const [orphan] = await world.redis.keys(`${key}:upgrade:*`);
    expect(orphan).toBeDefined();
    // The copy expires by itself; the stream has no expiry.
    const ttl = await world.redis.pttl(orphan!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(COPY_TTL_MS);
    expect(await world.redis.pttl(key)).toBe(-1);

    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([MIGRATION]);
    expect(decoded(await world.control.readEvents('killed', { count: 10 }))).toEqual(upgraded);
    // The stream took the copy's place without the copy's expiry.
    expect(await world.redis.pttl(key)).toBe(-1);
    expect(await world.redis.keys(`${key}:upgrade:*`)).toEqual([orphan]);
    expect(await world.redis.pttl(orphan!)).toBeGreaterThan(0);
  });

  it('refuses the swap of a runner whose lock another took over, changing nothing', async () => {
    const { keys, key } = await storeOldEvents('taken');
    const stream = await world.redis.xrange(key, '-', '+');
    // Another runner takes the lock over just before this one swaps (its TTL ran out unnoticed).
    const late = proxied(world.redis, {
      [swapCommand]: async (real, ...args) => {
        await world.redis.set(keys.migrationLock, 'another-runner');
        return real(...args);
      },
    });
    const refusal = await runRedisMigrations({ redis: late, keys }).catch(
      (error: unknown) => error,
    );
    expect(isProjectError(refusal) && refusal.code).toBe('conflict');
    expect((refusal as Error).message).toBe(
      `lost the Redis migration lock ${keys.migrationLock} while migrating: start again`,
    );
    expect(await world.redis.xrange(key, '-', '+')).toEqual(stream);
    expect(await world.redis.hexists(keys.migrations, MIGRATION)).toBe(0);
    expect(await world.redis.keys(`${key}:upgrade:*`)).toEqual([]);
    // The other runner's lock is left as it is.
    expect(await world.redis.get(keys.migrationLock)).toBe('another-runner');

    // The script itself refuses a token that is not the lock's.
    const copy = `${key}:upgrade:mine`;
    for (const [id, fields] of stream) await world.redis.xadd(copy, id, ...fields);
    expect(await swap(key, copy, stream.at(-1)![0], 'mine')).toBe(SCRIPT_STATUS.fenced);
    await world.redis.del(keys.migrationLock);
    expect(await swap(key, copy, stream.at(-1)![0], 'mine')).toBe(SCRIPT_STATUS.fenced);
    expect(await world.redis.xrange(key, '-', '+')).toEqual(stream);
  });

  it('never renames a copy over a stream that got an entry since the copy was made', async () => {
    const key = world.control.keys.events('busy');
    await world.redis.xadd(key, '1-0', 'e', '{"a":1}');
    await world.redis.xadd(`${key}:upgrade`, '1-0', 'e', '{"a":2}');
    await world.redis.xadd(key, '2-0', 'e', '{"b":1}');
    expect(await swap(key, `${key}:upgrade`, '1-0')).toBe(SCRIPT_STATUS.notOwned);
    expect((await world.redis.xrange(key, '-', '+')).map(([id]) => id)).toEqual(['1-0', '2-0']);
    await world.redis.xadd(`${key}:upgrade`, '2-0', 'e', '{"b":2}');
    expect(await swap(key, `${key}:upgrade`, '2-0')).toBe(SCRIPT_STATUS.owned);
    expect(await world.redis.xrange(key, '-', '+')).toEqual([
      ['1-0', ['e', '{"a":2}']],
      ['2-0', ['e', '{"b":2}']],
    ]);
  });

  it('never renames a copy that misses an entry or ends before the stream does', async () => {
    const key = world.control.keys.events('partial');
    const copy = `${key}:upgrade:other`;
    for (const id of ['0-5', '1-0', '2-0', '3-0']) {
      await world.redis.xadd(key, id, 'e', `{"at":"${id}"}`);
    }
    // Another runner's copy of the first pages, made before an appender trimmed the stream's head:
    // as long as the stream, but ending before it.
    for (const id of ['0-5', '1-0', '2-0']) await world.redis.xadd(copy, id, 'e', '{}');
    await world.redis.xdel(key, '0-5');
    const stream = await world.redis.xrange(key, '-', '+');
    expect(await swap(key, copy, '3-0')).toBe(SCRIPT_STATUS.notOwned);
    // A copy that got only the first page.
    await world.redis.del(copy);
    await world.redis.xadd(copy, '1-0', 'e', '{}');
    expect(await swap(key, copy, '3-0')).toBe(SCRIPT_STATUS.notOwned);
    // A copy that ends where the stream does but lost an entry in the middle.
    await world.redis.xadd(copy, '3-0', 'e', '{}');
    expect(await swap(key, copy, '3-0')).toBe(SCRIPT_STATUS.notOwned);
    expect(await world.redis.xrange(key, '-', '+')).toEqual(stream);
    // The whole copy is taken.
    await world.redis.del(copy);
    for (const id of ['1-0', '2-0', '3-0']) await world.redis.xadd(copy, id, 'e', '{}');
    expect(await swap(key, copy, '3-0')).toBe(SCRIPT_STATUS.owned);
    expect((await world.redis.xrange(key, '-', '+')).map(([id]) => id)).toEqual([
      '1-0',
      '2-0',
      '3-0',
    ]);
  });

  it('get what its absence meant once under BATON_HOME, one line per event', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'baton-events-'));
    try {
      const log = await openFileProjectLog({ home });
      await log.create({ ...newProjectRecord('old'), model: 'sim-opus' });
      const file = path.join(home, 'projects', 'old', 'events.jsonl');
      const { stored, upgraded } = oldEvents('old');
      const lines = [...withInterrupted(stored).map((event) => JSON.stringify(event)), 'not json'];
      await writeFile(file, `${lines.join('\n')}\n`);
      const migrations = path.join(home, 'migrations.json');
      const applied = (JSON.parse(await readFile(migrations, 'utf8')) as { applied: string[] })
        .applied;
      expect(applied).toContain(FILE_MIGRATION);
      const forget = () =>
        writeFile(
          migrations,
          JSON.stringify({ applied: applied.filter((id) => id !== FILE_MIGRATION) }),
        );
      await forget();

      const before = await createFileProjectLog({ home }).readEvents('old');
      expect(before.map(({ event }) => event.type)).toEqual(Array(6).fill('unknown'));

      const after = await (await openFileProjectLog({ home })).readEvents('old');
      expect(decoded(after).slice(0, 5)).toEqual(
        upgraded.map((event, index) => ({ id: String(index + 1), event })),
      );
      expect(after[5]).toMatchObject({ id: '6', event: { type: 'unknown', raw: 'not json' } });

      // Run again: the file is left byte for byte.
      const settled = await readFile(file, 'utf8');
      await forget();
      await openFileProjectLog({ home });
      expect(await readFile(file, 'utf8')).toBe(settled);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
