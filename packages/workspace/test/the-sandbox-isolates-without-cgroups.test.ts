import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * A host where no cgroup can be used, made for real: a cgroup2 hierarchy mounted over
 * /sys/fs/cgroup in a private mount namespace, whose memory and pids controllers are not
 * available. The sandbox must still run, isolate, enforce what it can, and say so.
 */
describe('without a usable cgroup', () => {
  it('the sandbox still isolates, limits memory per process and the wall clock, and says so', () => {
    const script = [
      'set -e',
      'mount -t cgroup2 none /sys/fs/cgroup',
      'exec node --conditions=@baton/source --import tsx test/support/sandbox-without-cgroups.ts',
    ].join('\n');
    const run = spawnSync('unshare', ['-m', 'sh', '-c', script], {
      cwd: packageDir,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as Record<
      string,
      { exitCode: number; output: string; stopped: string | null }
    > & {
      probe: { usable: boolean; limits: string; limitsProblem: string };
      line: string;
      status: string;
      limits: string;
      survivors: string;
    };
    expect(report.probe).toMatchObject({
      usable: true,
      limits: 'rlimit',
      limitsProblem:
        "cgroup v2: the memory and pids controllers are not delegated to the worker's cgroup",
    });
    // Said at start (baton run's and the worker's line) and in status / session-start.
    expect(report.line).toContain('NO CGROUP');
    expect(report.line).toContain('processes are not limited');
    expect(report.limits).toBe('rlimit');
    expect(report.status).toContain('64 MiB per process, processes not limited (no cgroup)');
    expect(report.echo).toEqual({ exitCode: 0, stopped: null, output: 'ok' });
    // Memory: one process cannot take 512 MiB under a 64 MiB limit.
    expect(report.memory?.exitCode).not.toBe(0);
    expect(report.memory?.output).not.toContain('allocated');
    // Isolation: files, the worker's environment, other processes.
    expect(report.canary?.output).toContain('unreachable');
    expect(report.canary?.output).not.toContain('outside');
    expect(report.secret?.output).toBe('0');
    expect(Number(report.processes?.output)).toBeLessThanOrEqual(4);
    // The wall clock, and nothing left behind.
    expect(report.timeout).toMatchObject({ stopped: 'timeout', output: 'started' });
    expect(report.leftover).toMatchObject({ exitCode: 0, output: 'left' });
    expect(report.survivors).toBe('');
    expect(report.dataLimit?.output).toBe(`${64 * 1024}\nkept`);
  });
});
