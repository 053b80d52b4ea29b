import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const CLI_MAIN = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../dist/main.js',
);
export const EXAMPLE_GOAL = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../examples/todo-app.md',
);

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running `baton` process: its output so far and its exit. */
export interface CliProcess {
  /** The `baton` process's id (the CLI runs in the spawned node process itself). */
  pid: number;
  stdout(): string;
  stderr(): string;
  kill(signal: NodeJS.Signals): void;
  /** Resolves when stdout contains `text` (rejects after `timeoutMs`). */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  done: Promise<CliRun>;
}

/** Environment for the CLI: no API key (so the built-in simulator runs), BATON_HOME in `home`. */
export function cliEnv(
  home: string,
  extra: Record<string, string | undefined> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, BATON_HOME: home, NO_COLOR: '1', ...extra };
  for (const key of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'BATON_MODEL']) {
    if (!(key in extra)) delete env[key];
  }
  return env;
}

/** Starts `baton ...args`; with `input`, that text is its stdin (otherwise stdin is /dev/null). */
export function startCli(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string },
): CliProcess {
  // The conditional stdin hides from spawn's overloads that stdout and stderr are always piped.
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
  if (options.input !== undefined) child.stdin?.end(options.input);
  let stdout = '';
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const waiter of waiters) waiter();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<CliRun>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    pid: child.pid ?? 0,
    stdout: () => stdout,
    stderr: () => stderr,
    kill: (signal) => child.kill(signal),
    waitForOutput(text, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (stdout.includes(text)) {
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(
          () => reject(new Error(`no "${text}" in output:\n${stdout}\n${stderr}`)),
          timeoutMs,
        );
        waiters.push(check);
        check();
      });
    },
    done,
  };
}

export function runCli(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<CliRun> {
  return startCli(args, options).done;
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-cli-')));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
