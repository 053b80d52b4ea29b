import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { WorkspaceError } from '../errors.js';
import type {
  CommandResult,
  CommandSandbox,
  RunCommandOptions,
  SandboxDescription,
  SandboxProcess,
  StartProcessOptions,
} from './command-sandbox.js';
import { type WorkspaceUsage, measureWorkspace, workspaceOverLimit } from './workspace-usage.js';

/** How often, at the least, a running command's workspace is measured against its limits. */
const WORKSPACE_WATCH_MS = 1_000;

/** One started command or process, as its starter hands it over. */
export interface StartedCommand {
  child: ChildProcess;
  /** SIGKILL every process the command started (its cgroup, or its process group). */
  killAll(): void;
  /** True when no process of the command is left. */
  settled(): boolean;
  /** Once it is gone: release what it ran in; `sandboxClosed` once `dispose` began. */
  cleanup(sandboxClosed: boolean): void;
}

/**
 * How one kind of sandbox starts commands (`BubblewrapCommands`, `HostCommands`):
 * `TrackedCommands` owns their timeouts, aborts, output and ends.
 */
export interface CommandStarter {
  readonly description: SandboxDescription;
  /** The workspace, measured against `workspaceLimits()` while and after each command runs. */
  readonly workspace: string;
  /** A command's wall clock when its options give none (ms). */
  defaultTimeoutMs(): number;
  workspaceLimits(): WorkspaceUsage;
  /** Starts `command` with stdout and stderr piped. */
  start(command: string, options: RunCommandOptions): StartedCommand;
  /** Starts `command` with stdin, stdout and stderr piped, for as long as it runs. */
  startChild(command: string, options: StartProcessOptions): StartedCommand;
  /** True when nothing is left to release: a second `dispose` has nothing to do. */
  released(): boolean;
  /** Releases what the sandbox holds once its processes are gone (proxy, cgroups, tmp). */
  close(): Promise<void>;
}

/** Runs children and tracks them so that a timeout, an abort or `dispose` kills them all. */
export class TrackedCommands implements CommandSandbox {
  readonly description: SandboxDescription;
  readonly #starter: CommandStarter;
  readonly #running = new Set<{ kill(): void; closed: Promise<void> }>();
  #disposed = false;

  constructor(starter: CommandStarter) {
    this.#starter = starter;
    this.description = starter.description;
  }

  /**
   * Measures the workspace while a command runs, every second or ten times as long as a walk
   * took, and calls `over` with the line once it is past its limits. Returns the stop.
   */
  #watchWorkspace(over: (line: string) => void): () => void {
    const limits = this.#starter.workspaceLimits();
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const look = async () => {
      const startedAt = Date.now();
      const line = workspaceOverLimit(
        await measureWorkspace(this.#starter.workspace, limits),
        limits,
      );
      if (stopped) return;
      if (line !== null) {
        over(line);
        return;
      }
      timer = setTimeout(look, Math.max(WORKSPACE_WATCH_MS, 10 * (Date.now() - startedAt)));
    };
    timer = setTimeout(look, WORKSPACE_WATCH_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }

  startProcess(argv: readonly string[], options: StartProcessOptions = {}): SandboxProcess {
    if (this.#disposed) throw new WorkspaceError('sandbox_unavailable', 'the sandbox was closed');
    if (argv.length === 0) throw new WorkspaceError('sandbox_unavailable', 'no program to start');
    const started = this.#starter.startChild(`exec ${argv.map(shellQuote).join(' ')}`, options);
    const { child } = started;
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    let markClosed!: () => void;
    const closed = new Promise<void>((resolve) => (markClosed = resolve));
    const exited = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>(
      (resolve) => {
        child.on('close', async (exitCode, signal) => {
          started.killAll();
          for (let waited = 0; !started.settled() && waited < 5_000; waited += 10) {
            await new Promise((wake) => setTimeout(wake, 10));
            started.killAll();
          }
          started.cleanup(this.#disposed);
          this.#running.delete(entry);
          markClosed();
          resolve({ exitCode, signal });
        });
      },
    );
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      started.killAll();
    };
    const entry = { kill, closed };
    this.#running.add(entry);
    return {
      stdin: child.stdin as Writable,
      stdout: child.stdout as Readable,
      stderr: child.stderr as Readable,
      exited,
      async stop() {
        kill();
        await closed;
      },
    };
  }

  async run(command: string, options: RunCommandOptions): Promise<CommandResult> {
    const startedAt = Date.now();
    if (this.#disposed || options.signal?.aborted === true) {
      return { exitCode: null, signal: null, stopped: 'aborted', durationMs: 0 };
    }
    let started: StartedCommand;
    try {
      started = this.#starter.start(command, options);
    } catch (error) {
      const message =
        error instanceof WorkspaceError ? error.message : 'the sandbox could not be set up';
      return { exitCode: null, signal: null, startError: message, durationMs: 0 };
    }
    const { child } = started;
    let stopped: CommandResult['stopped'];
    let workspaceFull: string | undefined;
    const kill = (why: 'timeout' | 'aborted' | 'workspace-full') => {
      stopped ??= why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      started.killAll();
    };
    let markClosed!: () => void;
    const entry = {
      kill: () => kill('aborted'),
      closed: new Promise<void>((r) => (markClosed = r)),
    };
    this.#running.add(entry);
    const timer = setTimeout(
      () => kill('timeout'),
      options.timeoutMs ?? this.#starter.defaultTimeoutMs(),
    );
    const onAbort = () => kill('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const stopWatching = this.#watchWorkspace((line) => {
      workspaceFull = line;
      kill('workspace-full');
    });
    child.stdout?.setEncoding('utf8').on('data', options.onOutput);
    child.stderr?.setEncoding('utf8').on('data', options.onOutput);
    return new Promise<CommandResult>((resolve) => {
      let startError: string | undefined;
      child.on('error', (error) => {
        startError = `the command could not start (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
      });
      child.on('close', async (code, signal) => {
        clearTimeout(timer);
        stopWatching();
        options.signal?.removeEventListener('abort', onAbort);
        // Whatever a command left behind (background jobs, daemons) ends with it. A killed
        // sandbox's processes die asynchronously: the result waits until they are gone.
        started.killAll();
        // Usually empty at once; otherwise bubblewrap's own pid 1 is still tearing its
        // namespaces down, which takes a few ms: look often at first, then every 10 ms.
        for (let waited = 0; !started.settled() && waited < 5_000;) {
          const step = waited < 20 ? 1 : 10;
          await new Promise((wake) => setTimeout(wake, step));
          waited += step;
          started.killAll();
        }
        started.cleanup(this.#disposed);
        if (workspaceFull === undefined) {
          const limits = this.#starter.workspaceLimits();
          workspaceFull =
            workspaceOverLimit(await measureWorkspace(this.#starter.workspace, limits), limits) ??
            undefined;
        }
        this.#running.delete(entry);
        markClosed();
        resolve({
          exitCode: code,
          signal,
          stopped,
          workspaceFull,
          startError,
          durationMs: Date.now() - startedAt,
        });
      });
    });
  }

  async dispose(): Promise<void> {
    if (this.#disposed && this.#running.size === 0 && this.#starter.released()) return;
    this.#disposed = true;
    const entries = [...this.#running];
    for (const entry of entries) entry.kill();
    await Promise.all(entries.map((entry) => entry.closed));
    await this.#starter.close();
  }
}

/** One shell word: `'...'` with every `'` closed, escaped and reopened. */
function shellQuote(argument: string): string {
  return `'${argument.replaceAll("'", "'\\''")}'`;
}
