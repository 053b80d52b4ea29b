import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { CLI_MAIN, EXAMPLE_GOAL, type CliRun, cliEnv, runCli } from './helpers.js';

const world = cliWorld();

interface SessionStart {
  type: string;
  sandbox?: {
    mode: string;
    limits?: string;
    policy?: { network: { allowedHosts: string[] } };
  };
}

async function sessionStarts(project: string): Promise<SessionStart[]> {
  const text = await readFile(path.join(world.home, 'projects', project, 'events.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as SessionStart)
    .filter((event) => event.type === 'session-start');
}

describe('baton run --allow-host (the schema and behaviour of enqueue)', () => {
  it('lets the project reach the hosts through the proxy, says so, and keeps them for the project', async () => {
    const args = ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'hosts', '--sessions', '1'];
    const result = await runCli(
      [...args, '--allow-host', 'Registry.npmjs.org', '--allow-host', '*.example.com'],
      { cwd: world.dir, env: cliEnv(world.home) },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(
      'Allowed hosts: registry.npmjs.org, *.example.com (through the sandbox proxy).',
    );
    const [start] = await sessionStarts('hosts');
    expect(start?.sandbox?.policy?.network.allowedHosts).toEqual([
      'registry.npmjs.org',
      '*.example.com',
    ]);
    const record = JSON.parse(
      await readFile(path.join(world.home, 'projects', 'hosts', 'project.json'), 'utf8'),
    ) as { project: { sandbox: unknown } };
    expect(record.project.sandbox).toEqual({
      allowedHosts: ['registry.npmjs.org', '*.example.com'],
    });
    // Continuing with other hosts is refused, as --skip-hooks is: they belong to the project.
    const other = await runCli(
      ['run', '--project', 'hosts', '--sessions', '1', '--allow-host', 'pypi.org'],
      { cwd: world.dir, env: cliEnv(world.home) },
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toBe(
      'baton: project hosts allows registry.npmjs.org, *.example.com; --allow-host is set when a project is created.\n',
    );
  });

  it('refuses a bad host in one line naming it, and creates nothing', async () => {
    for (const host of ['http://registry.npmjs.org', '10.0.0.1', 'a b']) {
      const result = await runCli(
        ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'bad', '--allow-host', host],
        { cwd: world.dir, env: cliEnv(world.home) },
      );
      expect(result.code, host).toBe(2);
      expect(result.stderr).toMatch(
        /^baton: sandbox\.allowedHosts\.0 must be a host name such as registry\.npmjs\.org/,
      );
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(existsSync(path.join(world.home, 'projects', 'bad'))).toBe(false);
    }
  });
});

describe('baton run on a host where no cgroup can be used', () => {
  it('runs sandboxed, says NO CGROUP at start and marks every session-start event', async () => {
    // A cgroup2 hierarchy mounted over /sys/fs/cgroup in a private mount namespace: the memory
    // and pids controllers are not available there, as on a v2 host without delegation.
    const child = spawn(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"',
        'sh',
        process.execPath,
        CLI_MAIN,
        'run',
        '--goal-file',
        EXAMPLE_GOAL,
        '--project',
        'nocgroup',
        '--sessions',
        '2',
      ],
      { cwd: world.dir, env: cliEnv(world.home), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const result = await new Promise<CliRun>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /Commands: commands sandboxed \(bubblewrap [\d.]+, NO CGROUP: cgroup v2: the memory and pids controllers are not delegated to the worker's cgroup; isolated as always, but memory is limited per process only and processes are not limited;/,
    );
    const starts = await sessionStarts('nocgroup');
    expect(starts).toHaveLength(2);
    for (const start of starts) {
      expect(start.sandbox).toMatchObject({ mode: 'bubblewrap', limits: 'rlimit' });
    }
    // The sessions' commands ran in that sandbox: the simulator's feature checks passed.
    const events = await readFile(
      path.join(world.home, 'projects', 'nocgroup', 'events.jsonl'),
      'utf8',
    );
    expect(events).toContain('"type":"checkpoint"');
  });
});
