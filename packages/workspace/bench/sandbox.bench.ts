// Sandbox start-up overhead per command: the same commands through the bash tool's two runners,
// sandboxed (bubblewrap + cgroup limits) and unsandboxed (the explicit opt-out), interleaved so
// both see the same machine load. Prints p50/p95 of each and the overhead. The workspace is a
// project's clone with Baton's git directory, mounted read-only as in every session.
// Then a checkpoint's commit hook run in the sandbox against the same hook on the host, and the
// start-up table again on the no-cgroup fallback (a cgroup2 hierarchy mounted over
// /sys/fs/cgroup in a private mount namespace: needs root and `unshare`).
// Last, the cost of measuring the workspace against its limits (`limits.workspaceMb`,
// `workspaceFiles`), which every command pays after it ends: Baton's walk against `du -s` of the
// same tree, and a sandboxed `true` on that workspace against the same on the small one.
//   pnpm bench:sandbox [--runs N] [--sizes 1000,30000,100000]
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommitHooks } from '../src/sandbox/hook-runner.js';
import { measureWorkspace } from '../src/sandbox/workspace-usage.js';
import {
  openCommandSandbox,
  openProjectWorkspace,
  parseSandboxPolicy,
  probeSandbox,
} from '../src/index.js';

const runsFlag = process.argv.indexOf('--runs');
const RUNS = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 200;
const sizesFlag = process.argv.indexOf('--sizes');
const SIZES = (sizesFlag > 0 ? (process.argv[sizesFlag + 1] ?? '') : '1000,30000,100000')
  .split(',')
  .map(Number);
if (
  !Number.isInteger(RUNS) ||
  RUNS < 1 ||
  SIZES.some((size) => !Number.isInteger(size) || size < 1)
) {
  console.error('usage: pnpm bench:sandbox [--runs N] [--sizes N,N,...] (positive integers)');
  process.exit(2);
}
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

/** Median of `runs` timings of `work`, after one warm-up. */
async function medianMs(runs: number, work: () => Promise<unknown> | unknown): Promise<number> {
  await work();
  const times: number[] = [];
  for (let index = 0; index < runs; index += 1) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

if (!NO_CGROUP_PART) {
  // The workspace walk: files of 100 bytes in directories of 100, as a node_modules or a build
  // output would add them. `du -s` is the named baseline for the walk alone; the sandboxed `true`
  // on the small workspace (the rows above) is the baseline for what a command pays in all.
  const small = await medianMs(Math.min(RUNS, 40), () =>
    sandboxed.run('true', { onOutput: () => undefined }),
  );
  console.log('');
  console.log(
    `measuring the workspace after each command (p50 of ${Math.min(RUNS, 20)} walks, load ${os.loadavg()[0]?.toFixed(1)}; a sandboxed \`true\` on the small workspace: ${small.toFixed(1)} ms)`,
  );
  console.log(
    'entries   | Baton walk   | du -s (baseline) | walk / du | sandboxed `true` | / small workspace',
  );
  const big = path.join(workspace, 'big');
  let made = 0;
  for (const size of SIZES.sort((a, b) => a - b)) {
    for (; made < size; made += 1) {
      const directory = path.join(big, `d${Math.floor(made / 100)}`);
      if (made % 100 === 0) mkdirSync(directory, { recursive: true });
      writeFileSync(path.join(directory, `f${made}.txt`), 'x'.repeat(100));
    }
    const runs = Math.max(3, Math.min(RUNS, 20));
    const walk = await medianMs(runs, () => measureWorkspace(workspace));
    const du = await medianMs(runs, () => spawnSync('du', ['-s', workspace]));
    const command = await medianMs(runs, () =>
      sandboxed.run('true', { onOutput: () => undefined }),
    );
    const entries = (await measureWorkspace(workspace)).files;
    console.log(
      [
        String(entries).padEnd(9),
        `${walk.toFixed(1)} ms`.padEnd(12),
        `${du.toFixed(1)} ms`.padEnd(16),
        `x${(walk / du).toFixed(2)}`.padEnd(9),
        `${command.toFixed(1)} ms`.padEnd(16),
        `x${(command / small).toFixed(2)}`,
      ].join(' | '),
    );
  }
  rmSync(big, { recursive: true, force: true });
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
