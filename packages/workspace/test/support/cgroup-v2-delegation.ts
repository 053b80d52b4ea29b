// Run by cgroup-v2-delegation.test.ts inside `unshare -m`, with a cgroup2 hierarchy mounted at
// argv[2]. Prints one JSON line of what the delegation steps did; leaves no cgroup behind.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { delegateCgroupV2 } from '../../src/sandbox/limits.js';

const root = process.argv[2] ?? '';
const own = `/baton-test-${process.pid}`;
const worker = path.join(root, own);
const read = (file: string) => readFileSync(path.join(worker, file), 'utf8').trim();
const sleeper = () => spawn('sleep', ['30'], { stdio: 'ignore' });

// What a container runtime or systemd does for the worker's parent: offer the controller to
// its children. The hierarchy is the machine's one cgroup2 tree, where nothing else may have
// enabled hugetlb yet (seen on a fresh machine: the root's subtree_control was empty).
if (!readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8').includes('hugetlb')) {
  writeFileSync(path.join(root, 'cgroup.subtree_control'), '+hugetlb');
}
mkdirSync(worker);
// The worker's cgroup holds the worker and another process of its tree (a container's init).
writeFileSync(path.join(worker, 'cgroup.procs'), String(process.pid));
const other = sleeper();
const command = sleeper();
const exited = (child: ReturnType<typeof sleeper>) =>
  new Promise((resolve) => child.once('exit', resolve));
try {
  writeFileSync(path.join(worker, 'cgroup.procs'), String(other.pid));
  let naive = 'ok';
  try {
    // What Baton did before: enable the controllers on the worker's own, populated cgroup.
    writeFileSync(path.join(worker, 'cgroup.subtree_control'), '+hugetlb');
  } catch (error) {
    naive = (error as NodeJS.ErrnoException).code ?? 'error';
  }
  const missing = delegateCgroupV2({ root, own, controllers: ['memory', 'pids'] });
  const delegated = delegateCgroupV2({ root, own, controllers: ['hugetlb'] });
  const again = delegateCgroupV2({ root, own, controllers: ['hugetlb'] });
  // A command's cgroup beside the leaf gets the controller and takes a process.
  mkdirSync(path.join(worker, 'command'));
  writeFileSync(path.join(worker, 'command', 'cgroup.procs'), String(command.pid));
  const report = {
    naive,
    missing,
    delegated,
    again,
    subtreeControl: read('cgroup.subtree_control'),
    workerProcs: read('cgroup.procs'),
    leafProcs: read('baton-worker/cgroup.procs').split('\n').map(Number).sort(),
    commandControllers: read('command/cgroup.controllers'),
    commandProcs: read('command/cgroup.procs'),
    self: readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((line) => line.startsWith('0::')),
    pids: { self: process.pid, other: other.pid, command: command.pid },
    worker,
    own,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
} finally {
  // The hierarchy is the machine's own: leave no cgroup behind, whatever failed above (an empty
  // cgroup can be removed once its killed processes have exited).
  const gone = [exited(other), exited(command)];
  other.kill('SIGKILL');
  command.kill('SIGKILL');
  writeFileSync(path.join(root, 'cgroup.procs'), String(process.pid));
  await Promise.all(gone);
  for (const directory of ['command', 'baton-worker', '']) {
    if (existsSync(path.join(worker, directory))) rmdirSync(path.join(worker, directory));
  }
}
