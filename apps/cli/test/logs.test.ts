import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { emptyUsageTotals } from '@baton/context-config';
import { decodeProjectEvent } from '@baton/projects';
import { describe, expect, it, vi } from 'vitest';
import { createLocalProject } from './local-project-fixture.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

// Each test spawns `baton` (a few seconds per process on a loaded 2-core machine).
vi.setConfig({ testTimeout: 120_000 });

const world = redisCliWorld();

const at = Date.UTC(2026, 0, 2, 3, 4, 5);
const totals = {
  ...emptyUsageTotals(),
  turns: 1,
  inputTokens: 1200,
  outputTokens: 80,
  costUsd: 0.0048,
};
const sessionEvents = (projectId: string) =>
  [
    {
      type: 'session-start',
      at,
      sessionId: 's1',
      kind: 'init',
      sessionNumber: 1,
      interrupted: false,
      model: 'sim',
      sandbox: { mode: 'off', reason: 'simulator', notice: 'commands run on the host' },
    },
    {
      type: 'turn',
      at,
      sessionId: 's1',
      turn: 1,
      model: 'sim',
      responseModel: 'sim',
      responseId: 'msg_1',
      phase: 'work',
      stopReason: 'tool_use',
      durationMs: 5,
      usage: {
        inputTokens: 1200,
        outputTokens: 80,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        cacheWrite5mInputTokens: 0,
        cacheWrite1hInputTokens: 0,
      },
      appliedEdits: [],
      clearedInputTokens: 0,
      cacheInvalidation: null,
      costUsd: 0.0048,
      totals,
    },
    {
      type: 'tool-call',
      at,
      sessionId: 's1',
      turn: 1,
      tool: 'memory',
      summary: 'create /memories/features.json',
      isError: false,
      durationMs: 1,
    },
    {
      type: 'memory-change',
      at,
      sessionId: 's1',
      change: { command: 'create', path: '/memories/features.json', bytes: 321, at },
    },
    {
      type: 'session-end',
      at,
      sessionId: 's1',
      result: {
        sessionId: 's1',
        kind: 'init',
        outcome: 'completed',
        reason: 'the model ended its turn',
        turns: 1,
        usage: totals,
        featuresBefore: { passing: 0, total: 0 },
        featuresAfter: { passing: 0, total: 2 },
        allFeaturesPass: false,
        flippedFeatures: [],
        startedAt: at,
        endedAt: at,
        commits: [],
        progressEntry: 'agent',
      },
    },
  ].map((event) => ({ v: 1, projectId, ...event }));

async function seededProject(): Promise<string> {
  const id = world.redis.projectId('logs');
  await world.redis.control.createProject({ id, goal: '- one\n- two', workspace: world.dir });
  for (const { v: _v, projectId: _projectId, ...event } of sessionEvents(id))
    await world.redis.append(id, event);
  return id;
}

describe('baton logs', () => {
  it('prints turns, tool calls, memory changes and session ends as readable lines', async () => {
    const id = await seededProject();
    const result = await world.cli(['logs', id]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d ● session 1 \(init\) · model sim$/);
    expect(lines[1]).toMatch(/turn 1 · tool_use · in 1\.2k out 80 · \$0\.0048$/);
    expect(lines[2]).toMatch(/ › memory create \/memories\/features\.json$/);
    expect(lines[3]).toMatch(/✎ memory create \/memories\/features\.json \(321 B\)$/);
    expect(lines[4]).toMatch(
      /✓ completed · no feature flipped · features \[░{10}\] 0\/2 · 1 turns/,
    );
    // Not following and not a TTY: the status is a plain line after the session end.
    expect(lines[5]).toBe(
      'session 1 (init) turn 1 · features [░░░░░░░░░░] 0/2 · in 1.2k out 80 · $0.0048 · last: memory create /memories/features.json',
    );
    expect(result.stdout).not.toContain('\u001b[');
  });

  it('--json prints the events decoded, one per line', async () => {
    const id = await seededProject();
    const result = await world.cli(['logs', id, '--json']);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(events).toEqual(sessionEvents(id).map(decodeProjectEvent));
    // Older shapes are upgraded once by a migration (packages/projects/test/events-migrate-once).
    expect(events.map((event) => (event as { type: string }).type)).not.toContain('unknown');
  });

  it('an unknown project exits 7 with one line', async () => {
    const result = await world.cli(['logs', 'nobody-z']);
    expect(result.code).toBe(7);
    expect(oneLine(result.stderr)).toBe(
      'baton: no project nobody-z on Redis (see `baton projects`; --local for `baton run` projects).',
    );
  });

  it("-f shows a running project's events live and stops when it completes (worker from `baton up`)", async () => {
    const { redis } = world;
    const up = world.start(['up', '--port', '0', '--json'], {
      BATON_CHAIN_DELAY_MS: '0',
      BATON_HOME: world.home,
    });
    await up.waitForOutput('"type":"ready"', 60_000);

    const id = redis.projectId('live');
    await redis.control.createProject({
      id,
      goal: 'Say hello\n- Write a hello file',
      workspace: path.join(world.dir, 'workspace'),
    });
    // A first event, so we can tell when `logs -f` has read the history and is following.
    await redis.append(id, { type: 'note', at: Date.now(), text: 'before' });
    const logs = world.start(['logs', id, '-f']);
    await logs.waitForOutput('note {"text":"before"}', 30_000);

    await redis.control.enqueue(id);
    const result = await logs.done;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const output = result.stdout;
    // Everything after the note arrived while following.
    expect(output.indexOf('session 1 queued')).toBeGreaterThan(output.indexOf('note'));
    for (const expected of [
      '● session 1 (init)',
      '● session 2 (resume)',
      '› memory',
      '✎ memory create /memories/features.json',
      'flipped F1',
      '◆ project running → completed',
    ]) {
      expect(output).toContain(expected);
    }
    expect(output.trimEnd().split('\n').at(-1)).toContain('◆ project running → completed');

    up.kill('SIGTERM');
    const stopped = await up.done;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain('"type":"stopped"');
  }, 180_000);
});

describe('baton logs --local', () => {
  it('prints a local event log and follows lines appended to it until Ctrl-C', async () => {
    const project = await createLocalProject(world.dir, 'local-l');
    const [first, ...rest] = sessionEvents('local-l');
    await writeFile(path.join(project, 'events.jsonl'), `${JSON.stringify(first)}\n`);
    const logs = world.start(['logs', 'local-l', '--local', '-f', '--json']);
    await logs.waitForOutput('"session-start"');
    for (const event of rest)
      await appendFile(path.join(project, 'events.jsonl'), `${JSON.stringify(event)}\n`);
    await logs.waitForOutput('"session-end"');
    logs.kill('SIGINT');
    const result = await logs.done;
    expect(result.code).toBe(0);
    expect(
      result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(sessionEvents('local-l').map(decodeProjectEvent));
  });

  it('a local project without an event log exits 2 saying so', async () => {
    await mkdir(path.join(world.dir, 'x'));
    await createLocalProject(world.dir, 'local-n');
    const result = await world.cli(['logs', 'local-n', '--local']);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain('local project local-n has no event log');
  });
});
