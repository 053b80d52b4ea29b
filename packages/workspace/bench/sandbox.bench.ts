// Sandbox start-up overhead per command: the same commands through the bash tool's two runners,
// sandboxed (bubblewrap + cgroup limits) and unsandboxed (the explicit opt-out), interleaved so
// both see the same machine load. Prints p50/p95 of each and the overhead. The workspace is a
// project's clone with Baton's git directory, mounted read-only as in every session.
// Then a checkpoint's commit hook run in the sandbox against the same hook on the host, and the
// start-up table again on the no-cgroup fallback (a cgroup2 hierarchy mounted over
// /sys/fs/cgroup in a private mount namespace: needs root and `unshare`).
//   pnpm bench:sandbox [--runs N]
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommitHooks } from '../src/sandbox/hook-runner.js';
import {
  openCommandSandbox,
  openProjectWorkspace,
  parseSandboxPolicy,
  probeSandbox,
} from '../src/index.js';

const runsFlag = process.argv.indexOf('--runs');
const RUNS = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 200;
/** Set in the re-run under a private cgroup2 mount: only the start-up table. */
const NO_CGROUP_PART = process.env.BATON_BENCH_PART === 'no-cgroup';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const probe = probeSandbox();
if (!probe.usable) {
  console.error(`the sandbox is unusable here: ${probe.problem}`);
  process.exit(1);
}
const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'baton-bench-sandbox-')));
const project = openProjectWorkspace({ home, projectId: 'bench', repo: null, baseCommit: null });
await project.prepare(null);
const workspace = realpathSync(project.dir);
const sandboxed = await openCommandSandbox({
  workspace,
  setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({}) },
  gitDir: project.gitDir,
});
const host = await openCommandSandbox({ workspace, setup: { mode: 'off', reason: 'opted-out' } });

const commands = { true: 'true', 'echo + ls': 'echo hi && ls >/dev/null' };
console.log(
  `sandbox start-up per command, ${RUNS} runs each, interleaved (${probe.version}, ${probe.limits}, load ${os.loadavg()[0]?.toFixed(1)})`,
);
console.log('command      | unsandboxed p50 / p95 | sandboxed p50 / p95 | overhead p50 / p95');
for (const [name, command] of Object.entries(commands)) {
  const times = { host: [] as number[], sandboxed: [] as number[] };
  for (let index = 0; index < 10; index += 1) {
    await host.run(command, { onOutput: () => undefined });
    await sandboxed.run(command, { onOutput: () => undefined });
  }
  for (let index = 0; index < RUNS; index += 1) {
    for (const [which, runner] of [
      ['host', host],
      ['sandboxed', sandboxed],
    ] as const) {
      const started = performance.now();
      const result = await runner.run(command, { onOutput: () => undefined });
      times[which].push(performance.now() - started);
      if (result.exitCode !== 0) throw new Error(`${which} ${name} exited ${result.exitCode}`);
    }
  }
  const h = times.host.sort((a, b) => a - b);
  const s = times.sandboxed.sort((a, b) => a - b);
  const row = [
    name.padEnd(12),
    `${percentile(h, 50).toFixed(1)} / ${percentile(h, 95).toFixed(1)} ms`.padEnd(21),
    `${percentile(s, 50).toFixed(1)} / ${percentile(s, 95).toFixed(1)} ms`.padEnd(19),
    `${(percentile(s, 50) - percentile(h, 50)).toFixed(1)} / ${(percentile(s, 95) - percentile(h, 95)).toFixed(1)} ms (x${(percentile(s, 50) / percentile(h, 50)).toFixed(2)} p50)`,
  ];
  console.log(row.join(' | '));
}
await sandboxed.dispose();
await host.dispose();

function row(name: string, host: number[], sandbox: number[]): string {
  const h = host.sort((a, b) => a - b);
  const s = sandbox.sort((a, b) => a - b);
  return [
    name.padEnd(12),
    `${percentile(h, 50).toFixed(1)} / ${percentile(h, 95).toFixed(1)} ms`.padEnd(21),
    `${percentile(s, 50).toFixed(1)} / ${percentile(s, 95).toFixed(1)} ms`.padEnd(19),
    `${(percentile(s, 50) - percentile(h, 50)).toFixed(1)} / ${(percentile(s, 95) - percentile(h, 95)).toFixed(1)} ms (x${(percentile(s, 50) / percentile(h, 50)).toFixed(2)} p50)`,
  ].join(' | ');
}

if (!NO_CGROUP_PART) {
  // A husky-style pre-commit: a hook that runs a script of the working tree, which reads the
  // staged files with git.
  const hooks = path.join(home, 'hooks');
  mkdirSync(hooks);
  writeFileSync(path.join(hooks, 'pre-commit'), '#!/bin/sh\nsh scripts/check.sh\n');
  chmodSync(path.join(hooks, 'pre-commit'), 0o755);
  mkdirSync(path.join(workspace, 'scripts'), { recursive: true });
  writeFileSync(
    path.join(workspace, 'scripts', 'check.sh'),
    'git diff --cached --name-only >/dev/null && echo checked\n',
  );
  const hookRuns = Math.max(5, Math.min(RUNS, 40));
  const times = { host: [] as number[], sandboxed: [] as number[] };
  for (let index = 0; index < hookRuns + 3; index += 1) {
    for (const [which, setup] of [
      ['host', { mode: 'off', reason: 'opted-out' }],
      ['sandboxed', { mode: 'bubblewrap', policy: parseSandboxPolicy({}) }],
    ] as const) {
      const started = performance.now();
      const ran = await runCommitHooks({
        workspace,
        gitDir: project.gitDir,
        hooksDir: hooks,
        setup,
        message: 'bench',
      });
      await ran.finish(false);
      if (ran.outcome !== 'passed') throw new Error(`${which} hook refused: ${ran.output}`);
      if (index >= 3) times[which].push(performance.now() - started);
    }
  }
  console.log('');
  console.log(
    `a checkpoint's pre-commit hook (runs scripts/check.sh: git diff --cached), ${hookRuns} runs each, interleaved, load ${os.loadavg()[0]?.toFixed(1)}`,
  );
  console.log(
    'hook         | on the host p50 / p95 | in the sandbox p50 / p95 | overhead p50 / p95',
  );
  console.log(row('pre-commit', times.host, times.sandboxed));

  // The same start-up table where no cgroup can be used (the rlimit fallback).
  const child = spawnSync(
    'unshare',
    [
      '-m',
      'sh',
      '-c',
      'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"',
      'sh',
      process.execPath,
      ...process.execArgv,
      ...process.argv.slice(1),
    ],
    { encoding: 'utf8', env: { ...process.env, BATON_BENCH_PART: 'no-cgroup' } },
  );
  console.log('');
  console.log(
    'no-cgroup fallback (cgroup2 mounted over /sys/fs/cgroup in a private mount namespace):',
  );
  console.log(
    child.status === 0
      ? child.stdout.trim()
      : `not measured: ${child.stderr.trim().split('\n')[0]}`,
  );
}
rmSync(home, { recursive: true, force: true });
