import { createFileProjectLog } from '@baton/projects';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_GOAL, cliEnv, runCli } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

// `baton run` and `baton enqueue` take one list of project options (apps/cli/src/internal/
// project-options.ts) with one meaning: the project's stored settings
// (docs/decisions/2026-12-04-one-cli-vocabulary.md).

const world = redisCliWorld();

const PROJECT_FLAGS = [
  '--goal',
  '--goal-file',
  '--repo',
  '--base',
  '--skip-hooks',
  '--workspace',
  '--adopt',
  '--model',
  '--fallback-model',
  '--preset',
  '--budget-usd',
  '--max-sessions',
  '--max-tokens',
  '--max-turns',
  '--stall-after',
  '--allow-host',
  '--check',
  '--require-checks',
  '--check-timeout',
  '--regression-budget',
  '--mcp-config',
];

/** Each option of a `--help` text with its description, words joined over the wrapped lines. */
function helpOptions(help: string): Map<string, string> {
  const options = new Map<string, string>();
  const section = help.split('\nOptions:\n')[1]!.split('\n\n')[0]!;
  let current: string | undefined;
  for (const line of section.split('\n')) {
    const start = /^ {2}(--[a-z-]+)(?: <[^>]+>)?\s+(.*)$/.exec(line);
    if (start) {
      current = start[1]!;
      options.set(current, start[2]!.trim());
    } else if (current !== undefined) {
      options.set(current, `${options.get(current)} ${line.trim()}`);
    }
  }
  return options;
}

describe('baton run and baton enqueue: one list of project options', () => {
  it('--help of both lists every project option in the same words', async () => {
    const run = await runCli(['run', '--help'], { cwd: world.dir, env: cliEnv(world.dir) });
    const enqueue = await runCli(['enqueue', '--help'], { cwd: world.dir, env: cliEnv(world.dir) });
    const runOptions = helpOptions(run.stdout);
    const enqueueOptions = helpOptions(enqueue.stdout);
    for (const flag of PROJECT_FLAGS) {
      expect(runOptions.get(flag), `run ${flag}`).toBeDefined();
      expect(runOptions.get(flag), flag).toBe(enqueueOptions.get(flag));
    }
    // In the same order in both.
    const order = (options: Map<string, string>) =>
      [...options.keys()].filter((flag) => PROJECT_FLAGS.includes(flag));
    expect(order(runOptions)).toEqual(PROJECT_FLAGS);
    expect(order(enqueueOptions)).toEqual(PROJECT_FLAGS);
  });

  it('both store the budgets, the turn limit and the fallback model as the project settings', async () => {
    const settings = [
      '--budget-usd',
      '3.5',
      '--max-sessions',
      '1',
      '--max-tokens',
      '900000',
      '--max-turns',
      '7',
      '--stall-after',
      '4',
      '--fallback-model',
      'claude-haiku-4-5',
    ];
    const stored = {
      budgets: {
        maxUsd: 3.5,
        maxSessions: 1,
        maxTokens: 900_000,
        maxSessionsWithoutProgress: 4,
        session: { maxTurns: 7 },
      },
      fallbackModel: 'claude-haiku-4-5',
    };
    const home = world.home;
    const run = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'kept', ...settings],
      {
        cwd: world.dir,
        env: cliEnv(home, { BATON_MODEL: 'sim' }),
      },
    );
    // --max-sessions 1: the project's own limit pauses it after the init session.
    expect(run.code, run.stderr).toBe(4);
    const local = await createFileProjectLog({ home }).require('kept');
    expect(local).toMatchObject({
      ...stored,
      status: 'paused',
      statusReason: 'budget: 1 of 1 sessions used',
    });
    const id = world.redis.projectId('kept');
    const enqueued = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal-file',
      EXAMPLE_GOAL,
      ...settings,
    ]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    expect(await world.redis.control.getProject(id)).toMatchObject(stored);
  });

  it('run --budget-usd is the project total: a later run of the project is held to it too', async () => {
    const home = world.home;
    const env = cliEnv(home, { BATON_MODEL: 'sim-sonnet' });
    const first = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'spent', '--budget-usd', '0.01'],
      { cwd: world.dir, env },
    );
    expect(first.code, first.stderr).toBe(4);
    const log = createFileProjectLog({ home });
    const paused = await log.require('spent');
    expect(paused.budgets.maxUsd).toBe(0.01);
    // Continuing without the flag: the stored total still holds (once a budget of one run only,
    // which let the second run go on to the end).
    const second = await runCli(['run', '--project', 'spent'], { cwd: world.dir, env });
    expect(second.code, second.stderr).toBe(4);
    const again = await log.require('spent');
    expect(again.counters.sessions).toBe(paused.counters.sessions + 1);
    expect(again.statusReason).toMatch(/^budget: \$0\.\d+ spent of \$0\.01$/);
    // A flag given when continuing replaces the stored value (each budget its own).
    const third = await runCli(
      ['run', '--project', 'spent', '--max-sessions', String(again.counters.sessions + 1)],
      {
        cwd: world.dir,
        env,
      },
    );
    expect(third.code, third.stderr).toBe(4);
    expect((await log.require('spent')).budgets).toMatchObject({
      maxUsd: 0.01,
      maxSessions: again.counters.sessions + 1,
    });
  });

  it('run refuses a --fallback-model that is the model, or differs from the stored one, in one line', async () => {
    const home = world.home;
    const same = await runCli(
      [
        'run',
        '--goal',
        'x\n- a',
        '--project',
        'fbsame',
        '--model',
        'sim',
        '--fallback-model',
        'sim',
      ],
      { cwd: world.dir, env: cliEnv(home) },
    );
    expect(same.code).toBe(2);
    expect(oneLine(same.stderr)).toBe(
      'baton: --fallback-model is the model itself (sim): a fallback is another model.',
    );
    expect(await createFileProjectLog({ home }).get('fbsame')).toBeNull();
    const created = await runCli(
      [
        'run',
        '--goal',
        'x\n- a',
        '--project',
        'fbkept',
        '--fallback-model',
        'claude-haiku-4-5',
        '--max-sessions',
        '1',
      ],
      { cwd: world.dir, env: cliEnv(home, { BATON_MODEL: 'sim' }) },
    );
    expect(created.code, created.stderr).toBe(4);
    const other = await runCli(
      ['run', '--project', 'fbkept', '--fallback-model', 'claude-opus-4-1'],
      { cwd: world.dir, env: cliEnv(home, { BATON_MODEL: 'sim' }) },
    );
    expect(other.code).toBe(2);
    expect(oneLine(other.stderr)).toBe(
      'baton: project fbkept falls back to claude-haiku-4-5; --fallback-model is set when a project is created.',
    );
  });

  it("enqueue --no-sandbox is refused: the sandbox is the worker's setting", async () => {
    const id = world.redis.projectId('nosb');
    const result = await world.cli(['enqueue', '--project', id, '--goal', 'x', '--no-sandbox']);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toMatch(
      /^baton: --no-sandbox is a setting of the worker, not of a project: .*`baton worker --no-sandbox`/,
    );
    expect(await world.redis.control.getProject(id)).toBeNull();
  });
});
