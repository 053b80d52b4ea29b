/**
 * The events the first event migration left to read-time defaults (tool calls, memory changes,
 * API retries, checkpoints, the other session events, the worker's events, a session start's
 * `interrupted`, an applied edit's `cleared_input_tokens`) are upgraded once (Redis
 * `2026-12-04-event-defaults` by `runRedisMigrations`, `BATON_HOME`
 * `2026-12-04-local-event-defaults` by `openFileProjectLog`) with every entry id kept; the decoder
 * has no defaults or lenient counts any more, so before the migration they read as malformed,
 * naming the missing field. The old shapes are written raw.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createFileProjectLog,
  openFileProjectLog,
  runRedisMigrations,
  type EventEntry,
} from '../src/index.js';
import { newProjectRecord } from './support/project-log-conformance.js';
import { useControlWorld } from './support/redis.js';

const MIGRATION = '2026-12-04-event-defaults';
const FILE_MIGRATION = '2026-12-04-local-event-defaults';

const at = 1_700_000_000_000;
const usage = {
  inputTokens: 10,
  outputTokens: 20,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheWrite5mInputTokens: 0,
  cacheWrite1hInputTokens: 0,
};
const totals = {
  ...usage,
  turns: 1,
  clearedInputTokens: 0,
  clearedToolUses: 0,
  clearedThinkingTurns: 0,
  cacheInvalidatedInputTokens: 0,
  costUsd: 0.1,
};

/** [as an earlier version wrote it, what the migration makes of it, the field it lacked]. */
function oldEvents(projectId: string): Array<[object, object, string]> {
  const base = { v: 1, at, projectId };
  const session = { ...base, sessionId: 's1' };
  const run = { ...session, sessionNumber: 1, jobId: 'j1', workerId: 'w1' };
  const turn = {
    ...session,
    type: 'turn',
    turn: 1,
    model: 'sim-haiku',
    responseModel: 'sim-haiku',
    phase: 'work',
    stopReason: 'end_turn',
    durationMs: 9,
    usage,
    clearedInputTokens: 0,
    cacheInvalidation: null,
    costUsd: 0.1,
    totals,
  };
  const checkpoint = {
    ...session,
    type: 'checkpoint',
    reason: 'turn',
    commit: null,
    head: null,
    pushed: false,
    hooks: 'none',
  };
  const pairs: Array<[object, object, string]> = [
    [
      {
        ...session,
        type: 'session-start',
        kind: 'init',
        sessionNumber: 1,
        model: 'sim-haiku',
        sandbox: { mode: 'bubblewrap' },
      },
      { interrupted: false },
      'interrupted',
    ],
    [{ ...session, type: 'tool-call', turn: 1, tool: 'bash' }, {}, 'summary'],
    [
      { ...session, type: 'memory-change', change: { command: 'create', path: '/memories/a' } },
      { change: { command: 'create', path: '/memories/a', bytes: 0, at: 0 } },
      'change.bytes',
    ],
    [
      {
        ...session,
        type: 'mcp-server',
        server: 'files',
        source: 'worker',
        transport: 'stdio',
        state: 'ready',
      },
      { tools: [] },
      'tools',
    ],
    [
      { ...session, type: 'model-fallback', from: 'a', to: 'b', turn: 1 },
      { message: '' },
      'message',
    ],
    [
      { ...session, type: 'context-full', turn: 1, cause: 'counter' },
      { promptTokens: null, contextWindow: null },
      'promptTokens',
    ],
    [{ ...session, type: 'empty-reply', turn: 1 }, { nudged: false }, 'nudged'],
    [{ ...session, type: 'api-retry', attempt: 1 }, { delayMs: 0, message: '' }, 'delayMs'],
    [checkpoint, { skipped: [] }, 'skipped'],
    [
      {
        ...checkpoint,
        skipped: [],
        tooLarge: [{ path: 'big.bin' }],
        replacedStale: { tip: 'abc', keptOn: 'baton/stale' },
      },
      {
        tooLarge: [{ path: 'big.bin', bytes: 0 }],
        replacedStale: { tip: 'abc', keptOn: 'baton/stale', fence: 0, commits: 0 },
      },
      'tooLarge.0.bytes',
    ],
    [
      { ...session, type: 'guidance-delivered', guidanceIds: ['g1'], turn: 1 },
      { inFirstMessage: false },
      'inFirstMessage',
    ],
    [{ ...base, type: 'project-status', from: null, to: 'running' }, { reason: null }, 'reason'],
    [
      { ...base, type: 'session-queued', sessionNumber: 1, jobId: 'j1', reason: 'first' },
      { delayMs: 0 },
      'delayMs',
    ],
    [{ ...run, type: 'session-claimed' }, { interrupted: false }, 'interrupted'],
    [
      { ...base, type: 'project-paused', by: 'operator' },
      { runningSessionId: null, removedJobId: null },
      'runningSessionId',
    ],
    [
      { ...base, type: 'guidance-sent', guidanceId: 'g1', text: 'hi' },
      { runningSessionId: null },
      'runningSessionId',
    ],
    [
      { ...run, type: 'workspace-prepared', branch: 'baton/x', head: null },
      { remoteHead: null, recovered: false },
      'remoteHead',
    ],
    [
      { ...run, type: 'memory-snapshot', commit: null, pushed: false },
      { withheld: [] },
      'withheld',
    ],
    [
      { ...turn, appliedEdits: [{ type: 'clear_tool_uses_20250919' }] },
      { appliedEdits: [{ type: 'clear_tool_uses_20250919', cleared_input_tokens: 0 }] },
      'appliedEdits.0.cleared_input_tokens',
    ],
  ];
  // A tool call's id and a turn's response id stay absent: no migration can know them.
  pairs[1]![1] = { summary: '', isError: false, durationMs: 0 };
  return pairs.map(([stored, filled, field]) => [stored, { ...stored, ...filled }, field]);
}

function decoded(entries: EventEntry[]) {
  return entries.map(({ id, event }) => ({ id, event }));
}

/** Before the migration every old entry is malformed, naming the field it lacks. */
function expectMalformed(entries: EventEntry[], events: Array<[object, object, string]>) {
  expect(
    entries.map(({ event }) =>
      event.type === 'unknown' ? event.problem.split(':')[0] : event.type,
    ),
  ).toEqual(events.map(([, , field]) => field));
}

const world = useControlWorld();

describe('events the first event migration left to read-time defaults', () => {
  it('get what their absence meant once in Redis, with every entry id kept', async () => {
    await world.control.createProject({ id: 'old', goal: 'Old events' });
    const { keys } = world.control;
    const key = keys.events('old');
    const events = oldEvents('old');
    const ids = events.map((_, index) => `${1000 + index}-${index % 3}`);
    for (const [index, [stored]] of events.entries()) {
      await world.redis.xadd(key, ids[index]!, 'e', JSON.stringify(stored));
    }
    await world.redis.hdel(keys.migrations, MIGRATION);

    expectMalformed(await world.control.readEvents('old', { count: 50 }), events);

    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([MIGRATION]);
    const after = await world.control.readEvents('old', { count: 50 });
    expect(decoded(after)).toEqual(events.map(([, event], index) => ({ id: ids[index], event })));
    expect(after.map(({ event }) => event)).not.toContainEqual(
      expect.objectContaining({ toolUseId: expect.anything() }),
    );
    expect(await world.redis.keys(`${key}:upgrade*`)).toEqual([]);

    // Run again: nothing is in an earlier shape, so the stream is left as it is.
    const settled = await world.redis.xrange(key, '-', '+');
    await world.redis.hdel(keys.migrations, MIGRATION);
    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([MIGRATION]);
    expect(await world.redis.xrange(key, '-', '+')).toEqual(settled);
  });

  it('get what their absence meant once under BATON_HOME, one line per event', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'baton-event-defaults-'));
    try {
      const log = await openFileProjectLog({ home });
      await log.create(newProjectRecord('old'));
      const file = path.join(home, 'projects', 'old', 'events.jsonl');
      const events = oldEvents('old');
      await writeFile(file, `${events.map(([stored]) => JSON.stringify(stored)).join('\n')}\n`);
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

      expectMalformed(await createFileProjectLog({ home }).readEvents('old'), events);

      const after = await (await openFileProjectLog({ home })).readEvents('old');
      expect(decoded(after)).toEqual(
        events.map(([, event], index) => ({ id: String(index + 1), event })),
      );

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
