// Sandbox start-up overhead per command: the same commands through the bash tool's two runners,
// sandboxed (bubblewrap + cgroup limits) and unsandboxed (the explicit opt-out), interleaved so
// both see the same machine load. Prints p50/p95 of each and the overhead. The workspace is a
// project's clone with Baton's git directory, mounted read-only as in every session.
//   pnpm bench:sandbox [--runs N]
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  openCommandSandbox,
  openProjectWorkspace,
  parseSandboxPolicy,
  probeSandbox,
} from '../src/index.js';

const runsFlag = process.argv.indexOf('--runs');
const RUNS = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 200;

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
rmSync(home, { recursive: true, force: true });
