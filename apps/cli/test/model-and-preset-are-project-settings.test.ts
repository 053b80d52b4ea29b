import { stat } from 'node:fs/promises';
import path from 'node:path';
import { startModelSim, type ModelSim, type SimRequestRecord } from '@baton/model-sim';
import { createFileProjectLog } from '@baton/projects';
import { beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLE_GOAL, cliEnv, runCli } from './helpers.js';
import { redisCliWorld } from './redis-fixtures.js';

// --model and --preset are project options like the budgets (docs/decisions/
// 2026-12-04-model-and-preset-are-project-settings.md): `baton run` stores them on its project as
// `baton enqueue` does, a continuing run without them keeps them, with them replaces them. The
// simulator's request log shows the model and context edits each request really carried.
const world = redisCliWorld();
let sim: ModelSim;
beforeEach(async () => {
  // BATON_MODEL names a model the API does not know: a session that falls back to it pauses.
  sim = world.closeAfter(await startModelSim({ faults: { unknownModels: ['claude-gone-1'] } }));
});

/** One `baton run` against the test's simulator; returns it and the messages it sent. */
async function run(
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; sent: SimRequestRecord[] }> {
  const before = sim.received.length;
  const result = await runCli(['run', '--sessions', '1', ...args], {
    cwd: world.dir,
    env: cliEnv(world.home, {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_MODEL: 'claude-gone-1',
      ...extra,
    }),
  });
  const sent = sim.received.slice(before).filter((entry) => entry.path === '/v1/messages');
  return { ...result, sent };
}

describe('--model and --preset are project settings on baton run as on baton enqueue', () => {
  it('run stores them; a continuing run keeps them without the flags and replaces them with', async () => {
    const log = createFileProjectLog({ home: world.home });
    const created = await run([
      '--goal-file',
      EXAMPLE_GOAL,
      '--project',
      'kept',
      '--model',
      'claude-haiku-4-5',
      '--preset',
      'off',
    ]);
    expect(created.code, created.stderr).toBe(3);
    expect(created.stdout).toContain('Context: off · no edits');
    expect(created.sent.length).toBeGreaterThan(1);
    expect(created.sent.every((entry) => entry.model === 'claude-haiku-4-5')).toBe(true);
    expect(created.sent.every((entry) => entry.contextEdits === undefined)).toBe(true);
    const stored = await log.require('kept');
    expect(stored).toMatchObject({
      model: 'claude-haiku-4-5',
      contextPreset: 'off',
      context: { preset: 'off' },
    });

    // Without the flags: the stored model over BATON_MODEL, the stored config over
    // BATON_CONTEXT_* (said in one line, as a worker says it).
    const continued = await run(['--project', 'kept'], { BATON_CONTEXT_PRESET: 'coding' });
    expect(continued.code, continued.stderr).toBe(3);
    expect(continued.stderr).toBe(
      'baton run: BATON_CONTEXT_PRESET is not applied: project kept runs the context config stored when it was created (--preset replaces its preset)\n',
    );
    expect(continued.stdout).toContain('Context: off · no edits');
    expect(continued.sent.length).toBeGreaterThan(0);
    expect(continued.sent.every((entry) => entry.model === 'claude-haiku-4-5')).toBe(true);
    expect(continued.sent.every((entry) => entry.contextEdits === undefined)).toBe(true);

    // With them: each replaces its stored value, for this run and the later ones.
    const replaced = await run([
      '--project',
      'kept',
      '--model',
      'claude-opus-4-1',
      '--preset',
      'long-horizon',
    ]);
    expect([0, 3], replaced.stderr).toContain(replaced.code);
    expect(replaced.sent.length).toBeGreaterThan(0);
    expect(replaced.sent.every((entry) => entry.model === 'claude-opus-4-1')).toBe(true);
    expect(replaced.sent[0]?.contextEdits).toEqual([
      'clear_tool_uses_20250919',
      'compact_20260112',
    ]);
    expect(await log.require('kept')).toMatchObject({
      model: 'claude-opus-4-1',
      contextPreset: 'long-horizon',
      context: { preset: 'long-horizon' },
    });
    expect((await log.listSessions('kept')).map((session) => session.model)).toEqual([
      'claude-haiku-4-5',
      'claude-haiku-4-5',
      'claude-opus-4-1',
    ]);

    // `baton enqueue` with the same flags, in the same directory and environment, stores the same.
    const id = world.redis.projectId('kept');
    const enqueued = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal-file',
      EXAMPLE_GOAL,
      '--model',
      'claude-haiku-4-5',
      '--preset',
      'off',
    ]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const remote = await world.redis.control.getProject(id);
    expect({
      model: remote?.model,
      contextPreset: remote?.contextPreset,
      context: remote?.context,
    }).toEqual({
      model: stored.model,
      contextPreset: stored.contextPreset,
      context: stored.context,
    });
  });

  it("a new project stores the creator's context config, and no model without --model (BATON_MODEL where it runs decides)", async () => {
    const created = await run(
      ['--goal-file', EXAMPLE_GOAL, '--project', 'plain', '--model', 'claude-haiku-4-5'],
      { BATON_CONTEXT_PRESET: 'search-heavy' },
    );
    expect(created.code, created.stderr).toBe(3);
    const log = createFileProjectLog({ home: world.home });
    expect(await log.require('plain')).toMatchObject({
      contextPreset: 'search-heavy',
      context: { preset: 'search-heavy' },
    });
    const unnamed = await run(['--goal-file', EXAMPLE_GOAL, '--project', 'unnamed'], {
      BATON_MODEL: 'claude-sonnet-4-6',
    });
    expect(unnamed.code, unnamed.stderr).toBe(3);
    expect((await log.require('unnamed')).model).toBeNull();
    expect(unnamed.sent.every((entry) => entry.model === 'claude-sonnet-4-6')).toBe(true);
    // Its next run takes the BATON_MODEL of that run.
    const next = await run(['--project', 'unnamed'], { BATON_MODEL: 'claude-haiku-4-5' });
    expect(next.code, next.stderr).toBe(3);
    expect(next.sent.every((entry) => entry.model === 'claude-haiku-4-5')).toBe(true);
  });

  it('a stored real model without ANTHROPIC_API_KEY is refused in one line, changing nothing', async () => {
    const created = await run([
      '--goal-file',
      EXAMPLE_GOAL,
      '--project',
      'nokey',
      '--model',
      'claude-haiku-4-5',
    ]);
    expect(created.code, created.stderr).toBe(3);
    const log = createFileProjectLog({ home: world.home });
    const before = await log.require('nokey');
    const refused = await runCli(['run', '--project', 'nokey'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'baton: ANTHROPIC_API_KEY is not set: model "claude-haiku-4-5" needs it; set it, or choose the simulator with --model sim\n',
    );
    expect(await log.require('nokey')).toEqual(before);
  });

  it('a new project naming a real model without ANTHROPIC_API_KEY is refused before BATON_HOME is touched', async () => {
    const home = path.join(world.dir, 'untouched-home');
    const refused = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--model', 'claude-haiku-4-5'],
      { cwd: world.dir, env: cliEnv(home) },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('ANTHROPIC_API_KEY is not set');
    await expect(stat(home)).rejects.toThrow(/ENOENT/);
  });

  it('a stored simulator model runs without ANTHROPIC_API_KEY whatever BATON_MODEL names', async () => {
    const created = await run([
      '--goal-file',
      EXAMPLE_GOAL,
      '--project',
      'stored-sim',
      '--model',
      'sim',
    ]);
    expect(created.code, created.stderr).toBe(3);
    // The project's model comes before BATON_MODEL: the stored simulator runs, no key needed.
    const continued = await runCli(['run', '--sessions', '1', '--project', 'stored-sim'], {
      cwd: world.dir,
      env: cliEnv(world.home, { BATON_MODEL: 'claude-haiku-4-5' }),
    });
    expect(continued.stderr).not.toContain('ANTHROPIC_API_KEY is not set');
    expect(continued.code, continued.stderr).toBe(3);
  });
});
