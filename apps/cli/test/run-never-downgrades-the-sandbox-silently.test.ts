import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { startModelSim } from '@baton/model-sim';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { EXAMPLE_GOAL, cliEnv, runCli } from './helpers.js';

/**
 * `baton run` and the sandbox: on by default, refused with one line when it cannot be created
 * (unless opted out), the simulator-only exception, and a loud opt-out. A machine "without
 * bubblewrap" is a PATH that holds everything `baton run` needs except `bwrap`.
 */

const world = cliWorld();

/** A bin directory with the programs a session uses, and no bwrap. */
async function pathWithoutBwrap(): Promise<string> {
  const bin = path.join(world.dir, 'bin');
  await mkdir(bin);
  for (const name of [
    'git',
    'sh',
    'bash',
    'node',
    'cat',
    'ls',
    'mkdir',
    'rm',
    'grep',
    'sed',
    'env',
    'test',
    'true',
    'chmod',
  ]) {
    const target = ['/usr/bin', '/bin'].map((where) => path.join(where, name)).find(existsSync);
    if (target !== undefined) await symlink(target, path.join(bin, name));
  }
  return bin;
}

async function sessionStarts(project: string) {
  const text = await readFile(path.join(world.home, 'projects', project, 'events.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map(
      (line) => JSON.parse(line) as { type: string; sandbox?: { mode: string; reason?: string } },
    )
    .filter((event) => event.type === 'session-start');
}

describe('baton run and the sandbox', () => {
  it('sandboxes commands by default and says so in every session-start event', async () => {
    const result = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'on', '--sessions', '2'],
      {
        cwd: world.dir,
        env: cliEnv(world.home),
      },
    );
    expect(result.stdout).toMatch(
      /Commands: commands sandboxed \(bubblewrap [\d.]+, cgroup-v[12]; no network;/,
    );
    expect(result.stderr).toBe('');
    const starts = await sessionStarts('on');
    expect(starts).toHaveLength(2);
    expect(starts.every((event) => event.sandbox?.mode === 'bubblewrap')).toBe(true);
  });

  it('refuses to start sessions of a real model without bubblewrap, in one line naming the fix', async () => {
    const sim = world.closeAfter(await startModelSim({ port: 0 }));
    const bin = await pathWithoutBwrap();
    const result = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'real', '--model', 'claude-test'],
      {
        cwd: world.dir,
        env: cliEnv(world.home, {
          ANTHROPIC_API_KEY: 'test-key',
          ANTHROPIC_BASE_URL: sim.url,
          PATH: bin,
        }),
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'baton: Commands cannot be sandboxed: bubblewrap (bwrap) is not installed. Fix: install it (apt-get install bubblewrap, dnf install bubblewrap), or opt out with BATON_SANDBOX=off / --no-sandbox.',
    ]);
    expect(existsSync(path.join(world.home, 'projects', 'real', 'events.jsonl'))).toBe(false);
    expect(sim.requests).toBe(0);
  });

  it('runs the simulator without bubblewrap, saying in one line that commands are not sandboxed', async () => {
    const bin = await pathWithoutBwrap();
    const result = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'demo', '--sessions', '2'],
      {
        cwd: world.dir,
        env: cliEnv(world.home, { PATH: bin }),
      },
    );
    expect(result.stderr).toBe(
      'baton run: Commands are not sandboxed: the simulator runs its own scripted commands only; install bubblewrap (apt-get install bubblewrap) to sandbox them.\n',
    );
    expect(result.code).toBe(3);
    const starts = await sessionStarts('demo');
    expect(starts.map((event) => event.sandbox)).toEqual([
      expect.objectContaining({ mode: 'off', reason: 'simulator' }),
      expect.objectContaining({ mode: 'off', reason: 'simulator' }),
    ]);
  });

  it('--no-sandbox and BATON_SANDBOX=off opt out loudly: stderr and every session-start event', async () => {
    for (const [project, args, extra] of [
      ['flag', ['--no-sandbox'], {}],
      ['variable', [], { BATON_SANDBOX: 'off' }],
    ] as const) {
      const result = await runCli(
        ['run', '--goal-file', EXAMPLE_GOAL, '--project', project, '--sessions', '1', ...args],
        { cwd: world.dir, env: cliEnv(world.home, extra) },
      );
      expect(result.stderr).toContain(
        'baton run: SANDBOX OFF: commands run on this machine unsandboxed',
      );
      const starts = await sessionStarts(project);
      expect(starts[0]?.sandbox).toMatchObject({ mode: 'off', reason: 'opted-out' });
    }
  });

  it('a BATON_SANDBOX that is not a valid policy stops the run with one line', async () => {
    const result = await runCli(['run', '--goal-file', EXAMPLE_GOAL, '--project', 'bad'], {
      cwd: world.dir,
      env: cliEnv(world.home, { BATON_SANDBOX: '{"network":{"allowedHosts":["http://x"]}}' }),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'baton: BATON_SANDBOX.network.allowedHosts.0 must be a host name such as registry.npmjs.org or *.example.com (no scheme, port, path or IP address).\n',
    );
  });
});
