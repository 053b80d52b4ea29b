/**
 * A separate process driving a FileSystemStore, for the cross-process and crash tests. Spawning
 * is slow, so one child serves many tasks. Protocol, one JSON value per line:
 * child prints `{"started":true}`; parent sends `{"task":{...}}`, child opens the store and
 * prints `{"ready":true}`; parent sends `"go"` (to every child at once, so races are real),
 * child runs the task and prints its result.
 */
import { createInterface } from 'node:readline';
import { createFileSystemStore } from '../src/stores/file-system-store.js';

export interface ChildTask {
  root: string;
  action: 'append' | 'rename' | 'overwrite-forever' | 'create-many';
  label?: string;
  count?: number;
  from?: string;
  to?: string;
  path?: string;
  size?: number;
  maxFiles?: number;
}

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

async function run(task: ChildTask, go: Promise<void>): Promise<unknown> {
  const store = await createFileSystemStore({
    root: task.root,
    // These tests prove no update is lost, not how long a waiter gives up after: on a loaded
    // machine (CI beside other work) a waiter can wait longer than the 10 s default.
    lockTimeoutMs: 120_000,
    limits: task.maxFiles === undefined ? undefined : { maxFiles: task.maxFiles },
  });
  print({ ready: true });
  await go;
  try {
    switch (task.action) {
      case 'append': {
        await Promise.all(
          Array.from({ length: task.count ?? 1 }, (_, index) =>
            store.edit(
              task.path ?? 'log.md',
              (current) => `${current}${task.label ?? ''}-${index}\n`,
            ),
          ),
        );
        return { done: true };
      }
      case 'rename': {
        const outcome = await store.rename(task.from ?? '', task.to ?? '').then(
          () => 'won',
          (error: unknown) => (error as { code?: string }).code ?? 'error',
        );
        return { outcome };
      }
      case 'create-many': {
        let created = 0;
        for (let index = 0; index < (task.count ?? 1); index++) {
          const ok = await store
            .write(`${task.label ?? 'x'}-${index}.md`, 'x', { mode: 'create' })
            .then(
              () => true,
              () => false,
            );
          if (ok) created += 1;
        }
        return { created };
      }
      case 'overwrite-forever': {
        // Killed by the parent mid-write: every version is one repeated character, so a torn
        // write would show as mixed characters.
        const size = task.size ?? 1_000_000;
        for (let version = 0; ; version++) {
          const character = String.fromCharCode(97 + (version % 26));
          await store.write(task.path ?? 'big.md', character.repeat(size), { mode: 'overwrite' });
          print({ wrote: version });
        }
      }
    }
  } finally {
    await store.close();
  }
}

let releaseGo: (() => void) | undefined;
let current: Promise<void> = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line) as { task?: ChildTask } | 'go';
  if (message === 'go') {
    releaseGo?.();
    return;
  }
  if (message.task !== undefined) {
    const task = message.task;
    const go = new Promise<void>((resolve) => {
      releaseGo = resolve;
    });
    current = current.then(async () => print(await run(task, go)));
  }
});
print({ started: true, pid: process.pid });
