import { existsSync } from 'node:fs';
import path from 'node:path';
import { startModelSim } from '@baton/model-sim';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli } from './helpers.js';

const world = cliWorld();

describe('baton run uses the model it names, or says why not', () => {
  it('a real model without ANTHROPIC_API_KEY is refused in one line, exit 2, nothing created', async () => {
    for (const [args, env] of [
      [['--model', 'claude-sonnet-4-6'], {}],
      [[], { BATON_MODEL: 'claude-sonnet-4-6' }],
    ] as const) {
      const result = await runCli(['run', '--goal', 'Tiny\n- One thing', ...args], {
        cwd: world.dir,
        env: cliEnv(world.home, env),
      });
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(
        'ANTHROPIC_API_KEY is not set: model "claude-sonnet-4-6" needs it',
      );
      expect(existsSync(path.join(world.home, 'projects'))).toBe(false);
    }
  });

  it('no key and no model: the simulator, recorded as sim and priced at 0; --model sim-sonnet runs it at Sonnet prices', async () => {
    type Line = { type: string; model?: string; costUsd?: number };
    const parse = (stdout: string) =>
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Line);
    const result = await runCli(['run', '--goal', 'Tiny\n- One thing', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(result.code).toBe(0);
    const events = parse(result.stdout);
    expect(events.find((event) => event.type === 'session-start')?.model).toBe('sim');
    const turns = events.filter((event) => event.type === 'turn');
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.every((event) => event.costUsd === 0)).toBe(true);
    expect(result.stderr).toContain('Using the built-in model simulator');

    // The named simulated model needs no key either, and costs what Sonnet would.
    const priced = await runCli(
      ['run', '--goal', 'Tiny\n- One thing', '--project', 'priced', '--model', 'sim-sonnet'],
      { cwd: world.dir, env: cliEnv(world.home) },
    );
    expect(priced.code).toBe(0);
    const pricedEvents = parse(
      (
        await runCli(['logs', 'priced', '--local', '--json'], {
          cwd: world.dir,
          env: cliEnv(world.home),
        })
      ).stdout,
    );
    expect(pricedEvents.find((event) => event.type === 'session-start')?.model).toBe('sim-sonnet');
    const pricedTurns = pricedEvents.filter((event) => event.type === 'turn');
    expect(pricedTurns.every((event) => (event.costUsd ?? 0) > 0)).toBe(true);
  });

  it('a key the API refuses (401) pauses the project with reason auth after one request', async () => {
    const sim = world.closeAfter(await startModelSim({ faults: { alwaysFail: 401 } }));
    const result = await runCli(
      ['run', '--goal', 'Tiny\n- One thing', '--project', 'keyless', '--model', 'claude-test'],
      {
        cwd: world.dir,
        env: cliEnv(world.home, { ANTHROPIC_API_KEY: 'bad-key', ANTHROPIC_BASE_URL: sim.url }),
      },
    );
    expect(result.code).toBe(6);
    expect(result.stdout).toContain('Paused: auth: The API refused the API key');
    expect(sim.requests).toBe(1);
  });

  it('a model the API does not know (404) pauses the project with one line naming it, without retrying', async () => {
    const sim = world.closeAfter(
      await startModelSim({ faults: { unknownModels: ['claude-nope-9'] } }),
    );
    const result = await runCli(
      ['run', '--goal', 'Tiny\n- One thing', '--project', 'nomodel', '--model', 'claude-nope-9'],
      {
        cwd: world.dir,
        env: cliEnv(world.home, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: sim.url }),
      },
    );
    expect(result.code).toBe(6);
    expect(result.stdout).toContain(
      'Paused: model_not_found: The API does not know the model "claude-nope-9" (404 not_found_error); name a model the API serves.',
    );
    expect(sim.received.map((record) => [record.status, record.model])).toEqual([
      [404, 'claude-nope-9'],
    ]);
  });
});
