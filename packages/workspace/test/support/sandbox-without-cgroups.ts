// Run by the-sandbox-isolates-without-cgroups.test.ts inside `unshare -m` with a cgroup2
// hierarchy mounted over /sys/fs/cgroup, whose memory and pids controllers cannot be had: a host
// where no cgroup can be delegated. Prints one JSON line of what the sandbox did.
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  decideSandbox,
  describeSandboxDecision,
  openCommandSandbox,
  parseSandboxPolicy,
  parseSandboxSetting,
  probeSandbox,
  sessionSandboxSetup,
  summarizeSandbox,
} from '../../src/index.js';

const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'baton-nocgroup-')));
const workspace = path.join(base, 'workspace');
await import('node:fs/promises').then(({ mkdir }) => mkdir(workspace));
const canary = path.join(base, 'canary.txt');
await writeFile(canary, 'outside\n');
process.env.BATON_TEST_SECRET = 'sk-ant-canary-no-cgroup';

const probe = probeSandbox();
const decision = decideSandbox(
  parseSandboxSetting(JSON.stringify({ limits: { memoryMb: 64, commandTimeoutMs: 2000 } })),
  { simulator: false },
);
if (decision.kind === 'refused') throw new Error(decision.message);
const setup = sessionSandboxSetup(decision, null);
const sandbox = await openCommandSandbox({ workspace, setup });
const run = async (command: string) => {
  let output = '';
  const result = await sandbox.run(command, { onOutput: (chunk) => (output += chunk) });
  return { exitCode: result.exitCode, stopped: result.stopped ?? null, output: output.trim() };
};
const marker = `${process.pid}.25`;
const report = {
  probe,
  line: describeSandboxDecision(decision),
  status: sandbox.description.mode === 'bubblewrap' ? summarizeSandbox(sandbox.description) : '',
  limits: sandbox.description.mode === 'bubblewrap' ? sandbox.description.limits : null,
  echo: await run('echo ok > made.txt && cat made.txt'),
  memory: await run(
    'node -e "const a=[]; for (let i=0;i<32;i++) a.push(Buffer.alloc(16*1024*1024,1)); console.log(\'allocated\')"',
  ),
  canary: await run(`cat ${canary} || echo unreachable`),
  secret: await run('cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n" | grep -c sk-ant-canary'),
  processes: await run('ls /proc | grep -c "^[0-9]"'),
  timeout: await run('echo started; sleep 30'),
  leftover: await run(`sleep ${marker} & echo left`),
  dataLimit: await run('ulimit -d; ulimit -H -d unlimited 2>/dev/null && echo raised || echo kept'),
  unused: parseSandboxPolicy({}).limits.processes,
};
await sandbox.dispose();
const { execFileSync } = await import('node:child_process');
let survivors: string;
try {
  survivors = execFileSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' }).trim();
} catch {
  survivors = '';
}
await rm(base, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ ...report, survivors })}\n`);
