import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let mountPoint: string | undefined;
afterEach(async () => {
  if (mountPoint !== undefined) await rm(mountPoint, { recursive: true, force: true });
});

/**
 * This machine is cgroup v1; a cgroup2 hierarchy mounted in a private mount namespace offers
 * only the hugetlb controller, which is enough to run every delegation step for real: the
 * kernel's "no internal processes" refusal, the move into a leaf, enabling the controller for
 * command cgroups beside it. Memory and pids limits themselves are not exercised here.
 */
describe('cgroup v2 delegation (a real cgroup2 hierarchy in a private mount namespace)', () => {
  it('moves every process of the worker cgroup into a leaf, then enables the controllers', async () => {
    mountPoint = await mkdtemp(path.join(os.tmpdir(), 'baton-cgroup2-'));
    const script = [
      'set -e',
      'mount -t tmpfs none "$0"',
      'mkdir "$0/cg"',
      'mount -t cgroup2 none "$0/cg"',
      'exec node --conditions=@baton/source --import tsx test/support/cgroup-v2-delegation.ts "$0/cg"',
    ].join('\n');
    const run = spawnSync('unshare', ['-m', 'sh', '-c', script, mountPoint], {
      cwd: packageDir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown> & {
      pids: { self: number; other: number; command: number };
      worker: string;
      own: string;
    };
    // The kernel refuses the old way: a populated cgroup cannot delegate.
    expect(report.naive).toBe('EBUSY');
    expect(report.missing).toEqual({
      ok: false,
      reason: "the memory and pids controllers are not delegated to the worker's cgroup",
    });
    expect(report.delegated).toEqual({
      ok: true,
      base: report.worker,
      leaf: path.join(report.worker, 'baton-worker'),
    });
    // Idempotent: a second worker start finds the controllers enabled and moves nothing.
    expect(report.again).toEqual({ ok: true, base: report.worker });
    expect(report.subtreeControl).toBe('hugetlb');
    expect(report.workerProcs).toBe('');
    expect(report.leafProcs).toEqual([report.pids.self, report.pids.other].sort());
    expect(report.self).toBe(`0::${report.own}/baton-worker`);
    expect(report.commandControllers).toBe('hugetlb');
    expect(report.commandProcs).toBe(String(report.pids.command));
  });
});
