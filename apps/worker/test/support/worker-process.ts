import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REDIS_URL } from '@baton/test-support';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/main.js');

export interface WorkerProcess {
  child: ChildProcess;
  /** Its `BATON_HOME`: the env's, or a temp directory of its own (removed when it exits). */
  home: string;
  /** Parsed JSON log lines so far. */
  logs: Record<string, unknown>[];
  stderr: string;
  /** Port of /metrics and /healthz (known after start). */
  httpPort: number;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  /** Resolves when a log line matches. */
  waitForLog(
    match: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  kill(signal?: NodeJS.Signals): void;
  /** SIGKILLs it if it still runs and waits for the exit (what a world does after the test). */
  close(): Promise<void>;
}

/**
 * The environment of a worker on `prefix` (Redis `redisUrl`, default REDIS_URL) whose model is
 * the simulator at `simUrl`, chaining sessions without delay; `extra` adds or overrides.
 */
export function simWorkerEnv(
  world: { prefix: string; simUrl: string; redisUrl?: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    REDIS_URL: world.redisUrl ?? REDIS_URL,
    BATON_PREFIX: world.prefix,
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: world.simUrl,
    BATON_CHAIN_DELAY_MS: '0',
    ...extra,
  };
}

/** Spawns `node dist/main.js` with the given environment and waits for "worker started". */
export async function spawnWorker(
  env: Record<string, string>,
  options: { waitStarted?: boolean } = {},
): Promise<WorkerProcess> {
  // A worker process is a machine of its own unless the test gives it a home.
  const ownHome = env.BATON_HOME === undefined;
  const home = env.BATON_HOME ?? mkdtempSync(path.join(os.tmpdir(), 'baton-worker-home-'));
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      LOG_LEVEL: 'info',
      BATON_HTTP_PORT: '0',
      BATON_HOME: home,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const watchers: {
    match: (line: Record<string, unknown>) => boolean;
    resolve: (line: Record<string, unknown>) => void;
  }[] = [];
  let buffer = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let index: number;
    while ((index = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
      try {
        const line = JSON.parse(text) as Record<string, unknown>;
        logs.push(line);
        if (process.env.TEST_WORKER_LOGS) process.stderr.write(`[worker ${child.pid}] ${text}\n`);
        for (const watcher of [...watchers]) {
          if (watcher.match(line)) {
            watchers.splice(watchers.indexOf(watcher), 1);
            watcher.resolve(line);
          }
        }
      } catch {
        // not JSON
      }
    }
  });
  const result: WorkerProcess = {
    child,
    home,
    logs,
    stderr: '',
    httpPort: 0,
    exited: new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        if (ownHome) rmSync(home, { recursive: true, force: true });
        resolve(code ?? signal ?? 'unknown');
      }),
    ),
    waitForLog(match, timeoutMs = 20_000) {
      const found = logs.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `worker ${child.pid}: no matching log line within ${timeoutMs} ms; stderr: ${result.stderr}`,
              ),
            ),
          timeoutMs,
        );
        watchers.push({
          match,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        void result.exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`worker ${child.pid} exited; stderr: ${result.stderr}`));
        });
      });
    },
    kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await result.exited;
    },
  };
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    result.stderr += chunk;
  });
  if (options.waitStarted !== false) {
    const started = await result.waitForLog((line) => line.msg === 'worker started');
    result.httpPort = Number(started.httpPort);
  }
  return result;
}

/** Kills every still-running worker (afterEach). */
export async function stopAll(workers: WorkerProcess[]): Promise<void> {
  for (const worker of workers.splice(0)) await worker.close();
}
