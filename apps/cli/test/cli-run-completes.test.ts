import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startModelSim } from '@baton/model-sim';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { EXAMPLE_GOAL, cliEnv, runCli, startCli } from './helpers.js';

const world = cliWorld();

describe('baton run on the built-in simulator', () => {
  it('runs the example goal to completion and exits 0', async () => {
    const result = await runCli(['run', '--goal-file', EXAMPLE_GOAL, '--project', 'todo'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^Using the built-in model simulator \(no ANTHROPIC_API_KEY set\) at http:\/\/127\.0\.0\.1:\d+\.$/,
    );
    expect(result.stdout).toContain('● session 1 (init) · model sim');
    expect(result.stdout).toContain('● session 5 (resume)');
    expect(result.stdout).toContain('› bash sh features/f1.sh');
    expect(result.stdout).toContain('Features [██████████] 4/4');
    expect(result.stdout).not.toContain('\u001b[');

    const project = path.join(world.home, 'projects', 'todo');
    const features = JSON.parse(
      await readFile(path.join(project, 'memories', 'features.json'), 'utf8'),
    ) as Array<{ passes: boolean }>;
    expect(features).toHaveLength(4);
    expect(features.every((feature) => feature.passes)).toBe(true);
    expect(await readFile(path.join(project, 'memories', 'progress.md'), 'utf8')).toContain(
      'Session 5',
    );
    // Without --repo the work goes to a bare repository Baton owns, on branch baton/todo.
    const remote = path.join(world.home, 'remotes', 'todo.git');
    const git = (...args: string[]) =>
      execFileSync('git', ['--git-dir', remote, ...args], { encoding: 'utf8' }).trim();
    const subjects = git('log', '--format=%s', 'baton/todo').split('\n');
    expect(
      subjects.every((subject) => /^baton: session [1-5] \((init|resume)\) of todo/.test(subject)),
    ).toBe(true);
    expect(git('ls-tree', '-r', '--name-only', 'baton/todo').split('\n')).toEqual(
      expect.arrayContaining(['init.sh', 'features/f1.sh', 'features/f4.sh']),
    );
    // project.json holds the same ProjectRecord a worker keeps in Redis.
    expect(JSON.parse(await readFile(path.join(project, 'project.json'), 'utf8'))).toMatchObject({
      v: 2,
      project: {
        id: 'todo',
        status: 'completed',
        statusReason: 'all 4 features pass',
        counters: { sessions: 5, sessionsStarted: 5, featuresPassing: 4, featuresTotal: 4 },
        activeSession: null,
        repo: null,
        branch: 'baton/todo',
        lastCheckpoint: git('rev-parse', 'baton/todo'),
      },
    });

    const logs = await runCli(['logs', 'todo', '--local', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(logs.code).toBe(0);
    const events = logs.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; sessionId: string });
    expect(events.filter((event) => event.type === 'session-start')).toHaveLength(5);
    expect(events.filter((event) => event.type === 'session-end')).toHaveLength(5);
    expect(events.some((event) => event.type === 'tool-call')).toBe(true);

    // `projects --local` shows the token and cost totals summed from every session's usage.
    const usage = events
      .filter((event) => event.type === 'session-end')
      .map(
        (event) =>
          (
            event as unknown as {
              result: {
                usage: {
                  inputTokens: number;
                  cacheReadInputTokens: number;
                  cacheCreationInputTokens: number;
                  outputTokens: number;
                  costUsd: number;
                };
              };
            }
          ).result.usage,
      );
    const projects = await runCli(['projects', '--local', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(projects.code).toBe(0);
    const [row] = JSON.parse(projects.stdout) as Array<{
      inputTokens: number;
      cacheReadInputTokens: number;
      cacheCreationInputTokens: number;
      outputTokens: number;
      costUsd: number;
    }>;
    const sum = (
      field: 'inputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens' | 'outputTokens',
    ) => usage.reduce((total, each) => total + each[field], 0);
    expect(row?.inputTokens).toBe(sum('inputTokens'));
    expect(row?.cacheReadInputTokens).toBe(sum('cacheReadInputTokens'));
    expect(row?.cacheCreationInputTokens).toBe(sum('cacheCreationInputTokens'));
    expect(row?.outputTokens).toBe(sum('outputTokens'));
    // Every request is cached: most input is read from the cache, the rest written to it.
    expect(row!.cacheReadInputTokens).toBeGreaterThan(row!.cacheCreationInputTokens);
    expect(row!.cacheCreationInputTokens).toBeGreaterThan(0);
    expect(row?.costUsd).toBeCloseTo(
      usage.reduce((sum, each) => sum + each.costUsd, 0),
      5,
    );
  });

  it('--json prints events as JSON lines and a run-end summary', async () => {
    const result = await runCli(['run', '--goal', 'Tiny\n- One thing', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; v?: number; exitCode?: number });
    // The same events a worker publishes, starting with the claim's status change.
    expect(events[0]).toMatchObject({
      type: 'project-status',
      v: 1,
      from: 'queued',
      to: 'running',
    });
    expect(events.find((event) => event.type === 'session-start')).toMatchObject({ v: 1 });
    expect(events[events.length - 1]).toMatchObject({
      type: 'run-end',
      exitCode: 0,
      features: { passing: 1, total: 1 },
    });
    expect(result.stderr).toContain('Using the built-in model simulator');
  });

  it('stops at --sessions with exit 3, says how to continue, and --project continues', async () => {
    const first = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'later', '--sessions', '2'],
      { cwd: world.dir, env: cliEnv(world.home) },
    );
    expect(first.code).toBe(3);
    expect(first.stdout).toContain('Features [███░░░░░░░] 1/4');
    expect(first.stdout).toContain('Continue with: baton run --project later');
    const second = await runCli(['run', '--project', 'later'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('● session 3 (resume)');
  });

  it('stops with exit 4 when --budget-usd is used up', async () => {
    // `sim` costs nothing: the simulator at Sonnet's prices spends the budget.
    const flags = ['--model', 'sim-sonnet', '--budget-usd', '0.01'];
    const result = await runCli(['run', '--goal-file', EXAMPLE_GOAL, ...flags], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(result.code).toBe(4);
    expect(result.stdout).toContain('Stopped at the cost budget.');
  });

  it('Ctrl-C ends the session cleanly (end-of-session turn) and exits 130', async () => {
    // An external simulator that stalls the 3rd request (init, writing the progress log), so the
    // run is mid-request when interrupted.
    const sim = await startModelSim({ faults: { stallOn: [3] } });
    try {
      const child = startCli(
        ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'stop', '--model', 'sim-model'],
        {
          cwd: world.dir,
          env: cliEnv(world.home, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: sim.url }),
        },
      );
      await child.waitForOutput('Using the Anthropic API at');
      await sim.waitForStalled(1, 20_000);
      child.kill('SIGINT');
      const result = await child.done;
      expect(result.code).toBe(130);
      expect(result.stdout).toContain('Ctrl-C: ending the session cleanly');
      expect(result.stdout).toContain('(end of session)');
      expect(result.stdout).toContain('■ cancelled');
      expect(result.stdout).toContain('Stopped. Continue with: baton run --project stop');
      const progress = await readFile(
        path.join(world.home, 'projects', 'stop', 'memories', 'progress.md'),
        'utf8',
      );
      expect(progress).toContain('Session 1 end');
      expect(
        JSON.parse(
          await readFile(path.join(world.home, 'projects', 'stop', 'project.json'), 'utf8'),
        ),
      ).toMatchObject({
        project: {
          status: 'cancelled',
          statusReason: 'cancelled by user (Ctrl-C)',
          counters: { sessions: 1 },
          activeSession: null,
        },
      });
    } finally {
      await sim.close();
    }
  });
});

describe('baton sim', () => {
  it('serves the Messages API in the foreground until Ctrl-C', async () => {
    const child = startCli(['sim', '--port', '0'], { cwd: world.dir, env: cliEnv(world.home) });
    await child.waitForOutput('Press Ctrl-C to stop.');
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(child.stdout())?.[1];
    expect(url).toBeDefined();
    const response = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'any',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({
        model: 'sim',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hello' }],
      }),
    });
    expect(response.status).toBe(200);
    child.kill('SIGINT');
    expect((await child.done).code).toBe(0);
  });
});
