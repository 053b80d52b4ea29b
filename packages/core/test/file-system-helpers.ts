import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createFileSystemStore, type FileSystemStore, type StoreLimits } from '@baton/core';
import type { ChildTask } from './file-system-child-process.js';

const here = dirname(fileURLToPath(import.meta.url));

/** A scratch directory and a store rooted at `<directory>/memories`. */
export interface FileSystemFixture {
  directory: string;
  root: string;
  store: FileSystemStore;
  cleanup: () => Promise<void>;
}

export async function createFixture(limits?: StoreLimits): Promise<FileSystemFixture> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-fs-'));
  const root = join(directory, 'memories');
  const store = await createFileSystemStore({
    root,
    lockTimeoutMs: 120_000,
    limits,
  });
  return {
    directory,
    root,
    store,
    cleanup: async () => {
      await store.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** A child process running `file-system-child-process.ts`, speaking JSON lines. */
export interface ChildWorker {
  process: ChildProcessWithoutNullStreams;
  /** Resolves with the next JSON line the child prints. */
  next: () => Promise<unknown>;
  send: (message: unknown) => void;
  exited: Promise<number | null>;
}

/** Spawns a worker and waits until it is up (spawning tsx is the slow part: reuse workers). */
export async function spawnWorker(): Promise<ChildWorker> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, 'file-system-child-process.ts')],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const lines: unknown[] = [];
  const waiting: Array<(line: unknown) => void> = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  createInterface({ input: child.stdout }).on('line', (line) => {
    const parsed: unknown = JSON.parse(line);
    const waiter = waiting.shift();
    if (waiter === undefined) lines.push(parsed);
    else waiter(parsed);
  });
  const worker: ChildWorker = {
    process: child,
    next: () =>
      lines.length > 0
        ? Promise.resolve(lines.shift())
        : new Promise((resolve, reject) => {
            waiting.push(resolve);
            void exited.then((code) =>
              reject(new Error(`child exited (${String(code)}) before answering: ${stderr}`)),
            );
          }),
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    exited,
  };
  const started = await worker.next();
  if (typeof started !== 'object' || started === null || !('started' in started)) {
    throw new Error(`unexpected first line from worker: ${JSON.stringify(started)}`);
  }
  return worker;
}

/** Gives each worker its task, waits until all are ready, releases them at once, collects results. */
export async function race(workers: ChildWorker[], tasks: ChildTask[]): Promise<unknown[]> {
  for (const [index, worker] of workers.entries()) worker.send({ task: tasks[index] });
  for (const worker of workers) {
    const ready = await worker.next();
    if (typeof ready !== 'object' || ready === null || !('ready' in ready)) {
      throw new Error(`worker not ready: ${JSON.stringify(ready)}`);
    }
  }
  for (const worker of workers) worker.send('go');
  return Promise.all(workers.map((worker) => worker.next()));
}

/** Ends workers started by `spawnWorker`. */
export async function stopWorkers(workers: ChildWorker[]): Promise<void> {
  for (const worker of workers) worker.process.stdin.end();
  for (const worker of workers) {
    if (worker.process.exitCode === null) worker.process.kill();
  }
  await Promise.all(workers.map((worker) => worker.exited));
}

/** The pid of a process that has certainly exited. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  const pid = child.pid;
  await new Promise((resolve) => child.on('exit', resolve));
  if (pid === undefined) throw new Error('no pid');
  return pid;
}
