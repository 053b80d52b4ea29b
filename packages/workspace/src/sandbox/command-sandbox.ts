import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkspaceError } from '../errors.js';
import {
  SANDBOX_PATH,
  SANDBOX_PROXY_PORT,
  type SandboxGit,
  bubblewrapArguments,
  sandboxedCommand,
} from './bubblewrap.js';
import { etcSnapshot } from './etc-snapshot.js';
import type { CgroupLimiter, CommandCgroup } from './limits.js';
import { type NetworkHolder, startNetworkHolder } from './network-holder.js';
import { type FilteringProxy, startFilteringProxy } from './network-proxy.js';
import type { BubblewrapDescription, SandboxDescription } from './description.js';
import { DEFAULT_SANDBOX_POLICY, type SandboxPolicy } from './policy.js';
import { requireSandbox } from './probe.js';
import { prepareSandboxGit } from './sandbox-git.js';
import {
  type WorkspaceUsage,
  measureWorkspace,
  workspaceLimits,
  workspaceOverLimit,
} from './workspace-usage.js';

/** How often, at the least, a running command's workspace is measured against its limits. */
const WORKSPACE_WATCH_MS = 1_000;

/** How one command of a session runs. */
export interface RunCommandOptions {
  /** Extra environment entries (never the worker's own environment). Default none. */
  env?: Readonly<Record<string, string>>;
  /** Wall clock of this command in ms. Default: the policy's `limits.commandTimeoutMs`. */
  timeoutMs?: number;
  /** Aborting it kills every process of the command. */
  signal?: AbortSignal;
  /** Receives stdout and stderr as they come, interleaved. */
  onOutput: (chunk: string) => void;
}

/** How a command ended. */
export interface CommandResult {
  /** Exit status of the command's shell, `null` when it was killed. */
  exitCode: number | null;
  /** The signal that ended it, if any. */
  signal: NodeJS.Signals | null;
  /**
   * Set when Baton stopped it: its wall clock ran out, the session is ending, or the workspace
   * went over its disk or file limit (`workspaceFull` says which).
   */
  stopped?: 'timeout' | 'aborted' | 'workspace-full';
  /**
   * Set when the workspace is over its limits (`limits.workspaceMb`, `workspaceFiles`) once the
   * command ended: one line for the model and events, naming the setting and no host path.
   */
  workspaceFull?: string;
  /** Set when the command could not start at all (a plain sentence, no host paths). */
  startError?: string;
  /** How long the command ran, in ms. */
  durationMs: number;
}

export type { SandboxDescription } from './description.js';

/** How a long-running process of a session (an MCP server) starts. */
export interface StartProcessOptions {
  /** Extra environment entries (never the worker's own environment). Default none. */
  env?: Readonly<Record<string, string>> | undefined;
  /**
   * Extra host paths the process sees read-only at the same place (the installed package of a
   * server Baton runs). Added to the policy's `filesystem.readOnlyPaths`. Default none.
   */
  readOnlyPaths?: readonly string[] | undefined;
}

/** A long-running process in the sandbox: its pipes, its end, and how to stop it. */
export interface SandboxProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the process and every process it started are gone. */
  readonly exited: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>;
  /** Kill it and every process it started; resolves when they are gone. Idempotent. */
  stop(): Promise<void>;
}

/** Runs one session's commands, and ends every process of them at `dispose`. */
export interface CommandSandbox {
  readonly description: SandboxDescription;
  run(command: string, options: RunCommandOptions): Promise<CommandResult>;
  /**
   * Start `argv` as a long-running process with pipes (an MCP server), under the same isolation
   * and limits as a command but without its wall clock: it lives until `stop` or `dispose`.
   * Throws `WorkspaceError` when the sandbox is disposed or the process cannot be set up.
   */
  startProcess(argv: readonly string[], options?: StartProcessOptions): SandboxProcess;
  /** Kill every process still running, stop the proxy, remove the private tmp. Idempotent. */
  dispose(): Promise<void>;
}

/** How a session's commands are to be run: in the sandbox with a policy, or not at all sandboxed. */
export type SandboxSetup =
  | BubblewrapDescription
  | {
      mode: 'off';
      reason: 'opted-out' | 'simulator';
      /** Only `limits.commandTimeoutMs` applies outside the sandbox. Default: the default policy. */
      policy?: SandboxPolicy;
    };

/** The sandbox with the default policy: what a session gets when nothing else is said. */
export const DEFAULT_SANDBOX_SETUP: SandboxSetup = {
  mode: 'bubblewrap',
  policy: DEFAULT_SANDBOX_POLICY,
};

/** Options of `openCommandSandbox`. */
export interface OpenCommandSandboxOptions {
  /** Realpath of the workspace. */
  workspace: string;
  setup: SandboxSetup;
  /**
   * Baton's git directory of the workspace (`ProjectWorkspace.gitDir`): commands see it
   * read-only, so `git status`, `git diff` and `git log` work while Baton's configuration, hooks,
   * refs and objects cannot change. Given by the caller, never read from the workspace's `.git`
   * file, which the agent can write. Default: none (git inside finds no repository of Baton's).
   */
  gitDir?: string;
}

/** The one-line notice of a session whose commands are not sandboxed. */
export function unsandboxedNotice(reason: 'opted-out' | 'simulator'): string {
  return reason === 'opted-out'
    ? 'SANDBOX OFF: commands run on this machine unsandboxed (BATON_SANDBOX=off / --no-sandbox); remove the opt-out to sandbox them.'
    : 'Commands are not sandboxed: the simulator runs its own scripted commands only; install bubblewrap (apt-get install bubblewrap) to sandbox them.';
}

/** What a setup means for people and events, without opening anything. */
export function describeSandbox(setup: SandboxSetup): SandboxDescription {
  if (setup.mode === 'off') {
    return { mode: 'off', reason: setup.reason, notice: unsandboxedNotice(setup.reason) };
  }
  return setup.limits === undefined
    ? { mode: 'bubblewrap', policy: setup.policy }
    : { mode: 'bubblewrap', policy: setup.policy, limits: setup.limits };
}

/** One line for `baton status`, the dashboard and logs: where a session's commands ran. */
export function summarizeSandbox(description: SandboxDescription): string {
  if (description.mode === 'off') return description.notice;
  const { network, limits } = description.policy;
  const hosts =
    network.allowedHosts.length === 0
      ? 'no network'
      : `network only to ${network.allowedHosts.join(', ')}`;
  if (description.limits === 'rlimit') {
    return `sandboxed (bubblewrap): ${hosts}; per command ${limits.commandTimeoutMs / 1000} s, ${limits.memoryMb} MiB per process, processes not limited (no cgroup)`;
  }
  return `sandboxed (bubblewrap): ${hosts}; per command ${limits.commandTimeoutMs / 1000} s, ${limits.memoryMb} MiB, ${limits.processes} processes`;
}

/** The environment every command gets: nothing of the worker's, plus `extra`. */
function commandEnvironment(
  workspace: string,
  pathValue: string,
  tmp: string,
  extra: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  return {
    PATH: pathValue,
    HOME: workspace,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    CI: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  };
}

/** Runs children and tracks them so that a timeout, an abort or `dispose` kills them all. */
abstract class TrackedCommands implements CommandSandbox {
  abstract readonly description: SandboxDescription;
  protected readonly running = new Set<{ kill(): void; closed: Promise<void> }>();
  protected disposed = false;

  protected abstract start(
    command: string,
    options: RunCommandOptions,
  ): { child: ChildProcess; killAll(): void; settled(): boolean; cleanup(): void };

  protected abstract defaultTimeoutMs(): number;

  /** The workspace, measured against `workspaceLimits()` while and after each command runs. */
  protected abstract readonly workspace: string;
  protected abstract workspaceLimits(): WorkspaceUsage;

  /**
   * Measures the workspace while a command runs, every second or ten times as long as a walk
   * took, and calls `over` with the line once it is past its limits. Returns the stop.
   */
  #watchWorkspace(over: (line: string) => void): () => void {
    const limits = this.workspaceLimits();
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const look = async () => {
      const startedAt = Date.now();
      const line = workspaceOverLimit(await measureWorkspace(this.workspace, limits), limits);
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

  /** Starts `command` with stdin, stdout and stderr piped, for as long as it runs. */
  protected abstract startChild(
    command: string,
    options: StartProcessOptions,
  ): { child: ChildProcess; killAll(): void; settled(): boolean; cleanup(): void };

  startProcess(argv: readonly string[], options: StartProcessOptions = {}): SandboxProcess {
    if (this.disposed) throw new WorkspaceError('sandbox_unavailable', 'the sandbox was closed');
    if (argv.length === 0) throw new WorkspaceError('sandbox_unavailable', 'no program to start');
    const started = this.startChild(`exec ${argv.map(shellQuote).join(' ')}`, options);
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
          started.cleanup();
          this.running.delete(entry);
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
    this.running.add(entry);
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
    if (this.disposed || options.signal?.aborted === true) {
      return { exitCode: null, signal: null, stopped: 'aborted', durationMs: 0 };
    }
    let started: ReturnType<TrackedCommands['start']>;
    try {
      started = this.start(command, options);
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
    this.running.add(entry);
    const timer = setTimeout(() => kill('timeout'), options.timeoutMs ?? this.defaultTimeoutMs());
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
        started.cleanup();
        if (workspaceFull === undefined) {
          const limits = this.workspaceLimits();
          workspaceFull =
            workspaceOverLimit(await measureWorkspace(this.workspace, limits), limits) ?? undefined;
        }
        this.running.delete(entry);
        markClosed();
        resolve({
          exitCode: code,
          signal,
          ...(stopped === undefined ? {} : { stopped }),
          ...(workspaceFull === undefined ? {} : { workspaceFull }),
          ...(startError === undefined ? {} : { startError }),
          durationMs: Date.now() - startedAt,
        });
      });
    });
  }

  protected async stopAll(): Promise<void> {
    this.disposed = true;
    const entries = [...this.running];
    for (const entry of entries) entry.kill();
    await Promise.all(entries.map((entry) => entry.closed));
  }

  abstract dispose(): Promise<void>;
}

/** One shell word: `'...'` with every `'` closed, escaped and reopened. */
function shellQuote(argument: string): string {
  return `'${argument.replaceAll("'", "'\\''")}'`;
}

/** A process waiting in a command's cgroups to become that command's bubblewrap. */
interface Launcher {
  child: ChildProcess;
  cgroup: CommandCgroup;
}

/**
 * Joins the cgroups named as arguments, reads NUL-separated arguments from stdin, runs them.
 * `--norc`: bash reads `~/.bashrc` when its stdin is a socket, which Node's pipes are.
 */
const LAUNCHER_SCRIPT = [
  'for file in "$@"; do echo $$ > "$file" || exit 125; done',
  // Without cgroups: a hard per-process memory limit nothing inside can raise.
  'if [ -n "${BATON_DATA_LIMIT_KB:-}" ]; then ulimit -S -H -d "$BATON_DATA_LIMIT_KB" || exit 125; fi',
  // No single file larger than the workspace may hold (a runaway write stops at once).
  'if [ -n "${BATON_FILE_LIMIT_KB:-}" ]; then ulimit -S -H -f "$BATON_FILE_LIMIT_KB" || exit 125; fi',
  'unset BATON_DATA_LIMIT_KB BATON_FILE_LIMIT_KB',
  // No arguments: the worker went away before sending a command (its end of stdin closed).
  "mapfile -d '' -t command && [ ${#command[@]} -gt 0 ] || exit 125",
  'exec "${command[@]}" </dev/null',
].join('\n');

/**
 * The launcher of a long-running process: as `LAUNCHER_SCRIPT`, but the arguments come on fd 3
 * and stdin stays the process's own pipe.
 */
const PROCESS_LAUNCHER_SCRIPT = [
  'for file in "$@"; do echo $$ > "$file" || exit 125; done',
  'if [ -n "${BATON_DATA_LIMIT_KB:-}" ]; then ulimit -S -H -d "$BATON_DATA_LIMIT_KB" || exit 125; fi',
  // No single file larger than the workspace may hold (a runaway write stops at once).
  'if [ -n "${BATON_FILE_LIMIT_KB:-}" ]; then ulimit -S -H -f "$BATON_FILE_LIMIT_KB" || exit 125; fi',
  'unset BATON_DATA_LIMIT_KB BATON_FILE_LIMIT_KB',
  "mapfile -d '' -t command <&3 && [ ${#command[@]} -gt 0 ] || exit 125",
  'exec 3<&-',
  'exec "${command[@]}"',
].join('\n');

/**
 * Starts `script` (`LAUNCHER_SCRIPT` or `PROCESS_LAUNCHER_SCRIPT`) in its own process group with
 * the cgroups' `cgroup.procs` files as arguments and, without cgroups, the data limit to set.
 */
function spawnLauncher(
  script: string,
  cgroup: CommandCgroup,
  limits: WorkspaceUsage,
  stdio: ('pipe' | 'ignore')[],
): ChildProcess {
  return spawn(
    '/bin/bash',
    ['--norc', '--noprofile', '-c', script, 'launcher', ...cgroup.procsFiles],
    {
      cwd: '/',
      env: {
        PATH: '/usr/bin:/bin',
        BATON_FILE_LIMIT_KB: String(Math.ceil(limits.bytes / 1024)),
        ...(cgroup.dataLimitKb === undefined
          ? {}
          : { BATON_DATA_LIMIT_KB: String(cgroup.dataLimitKb) }),
      },
      detached: true,
      stdio,
    },
  );
}

class BubblewrapSandbox extends TrackedCommands {
  readonly description: SandboxDescription;
  protected readonly workspace: string;
  readonly #policy: SandboxPolicy;
  readonly #bwrap: string;
  readonly #limiter: CgroupLimiter;
  readonly #tmp: string;
  readonly #etc: string;
  readonly #git: SandboxGit | undefined;
  readonly #hooks: string | undefined;
  readonly #proxy: FilteringProxy | undefined;
  /** The session's network namespace, joined by every command and process; none without nsenter. */
  readonly #holder: NetworkHolder | undefined;
  readonly #leftovers: CommandCgroup[] = [];
  /**
   * Empty cgroups of finished commands, reused by the next ones: a fresh cgroup per command
   * costs milliseconds at each start and leaves a dying memory cgroup behind in the kernel for
   * as long as the command's page cache lives. Only an empty cgroup is reused, so nothing of one
   * command is ever in another's.
   */
  readonly #idle: CommandCgroup[] = [];
  /** The launcher of the next command, ready in its cgroup. */
  #next: Launcher | undefined;

  constructor(options: {
    workspace: string;
    policy: SandboxPolicy;
    bwrap: string;
    limiter: CgroupLimiter;
    tmp: string;
    etc: string;
    git: SandboxGit | undefined;
    hooks: string | undefined;
    proxy: FilteringProxy | undefined;
    holder: NetworkHolder | undefined;
  }) {
    super();
    this.workspace = options.workspace;
    this.#policy = options.policy;
    this.#bwrap = options.bwrap;
    this.#limiter = options.limiter;
    this.#tmp = options.tmp;
    this.#etc = options.etc;
    this.#git = options.git;
    this.#hooks = options.hooks;
    this.#proxy = options.proxy;
    this.#holder = options.holder;
    this.description = {
      mode: 'bubblewrap',
      policy: options.policy,
      limits: options.limiter.enforcement,
    };
  }

  protected defaultTimeoutMs(): number {
    return this.#policy.limits.commandTimeoutMs;
  }

  protected workspaceLimits(): WorkspaceUsage {
    return workspaceLimits(this.#policy);
  }

  protected start(command: string, options: RunCommandOptions) {
    const argv = this.#bubblewrapArgv(command, options.env, []);
    const { child, cgroup } = this.#takeLauncher();
    // NUL cannot occur in an argument, so it separates them.
    child.stdin?.end(argv.map((argument) => `${argument}\0`).join(''));
    return {
      child,
      killAll: () => cgroup.killAll(),
      settled: () => cgroup.empty(),
      cleanup: () => {
        if (this.disposed || !cgroup.empty()) {
          if (!cgroup.remove()) this.#leftovers.push(cgroup);
        } else {
          this.#idle.push(cgroup);
        }
        if (!this.disposed) this.#next ??= this.#spawnLauncher();
      },
    };
  }

  protected startChild(command: string, options: StartProcessOptions) {
    const argv = this.#bubblewrapArgv(command, options.env, options.readOnlyPaths ?? []);
    const cgroup = this.#idle.pop() ?? this.#limiter.create(this.#policy.limits);
    let child: ChildProcess;
    try {
      child = spawnLauncher(PROCESS_LAUNCHER_SCRIPT, cgroup, this.workspaceLimits(), [
        'pipe',
        'pipe',
        'pipe',
        'pipe',
      ]);
    } catch (error) {
      cgroup.remove();
      throw new WorkspaceError('sandbox_unavailable', 'the process could not start', {
        cause: error,
      });
    }
    const args = child.stdio[3] as Writable | null;
    args?.on('error', () => undefined);
    args?.end(argv.map((argument) => `${argument}\0`).join(''));
    return {
      child,
      killAll: () => cgroup.killAll(),
      settled: () => cgroup.empty(),
      cleanup: () => {
        if (!cgroup.remove()) this.#leftovers.push(cgroup);
      },
    };
  }

  /** bubblewrap and its arguments for one command of this session. */
  #bubblewrapArgv(
    command: string,
    extraEnv: Readonly<Record<string, string>> | undefined,
    readOnlyPaths: readonly string[],
  ): string[] {
    const proxyEnv: Record<string, string> = {};
    if (this.#proxy !== undefined) {
      const url = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
      for (const key of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) {
        proxyEnv[key] = url;
      }
      proxyEnv.NO_PROXY = proxyEnv.no_proxy = 'localhost,127.0.0.1';
    }
    const env = commandEnvironment(this.workspace, SANDBOX_PATH, '/tmp', {
      ...proxyEnv,
      ...extraEnv,
    });
    const policy =
      readOnlyPaths.length === 0
        ? this.#policy
        : {
            ...this.#policy,
            filesystem: {
              readOnlyPaths: [...this.#policy.filesystem.readOnlyPaths, ...readOnlyPaths],
            },
          };
    const args = bubblewrapArguments(
      {
        workspace: this.workspace,
        tmp: path.join(this.#tmp, 'tmp'),
        etc: this.#etc,
        // Joined to the holder's namespace, the holder forwards the proxy port for everyone.
        ...(this.#proxy === undefined || this.#holder !== undefined
          ? {}
          : { proxySocket: this.#proxy.socketPath }),
        ...(this.#holder === undefined ? {} : { sharedNetwork: true }),
        ...(this.#git === undefined || !this.#dotGitIsFile() ? {} : { git: this.#git }),
        ...(this.#hooks === undefined ? {} : { hooks: this.#hooks }),
      },
      policy,
      env,
    );
    if (this.#holder !== undefined) {
      return [...this.#holder.join, this.#bwrap, ...args, ...sandboxedCommand(command, false)];
    }
    return [this.#bwrap, ...args, ...sandboxedCommand(command, this.#proxy !== undefined)];
  }

  /** The launcher made ready after the previous command, or a new one if it is gone. */
  #takeLauncher(): Launcher {
    const ready = this.#next;
    this.#next = undefined;
    if (ready !== undefined) {
      const { child } = ready;
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        return ready;
      }
      void this.#retire(ready);
    }
    return this.#spawnLauncher();
  }

  /**
   * A shell that joins a command's cgroups, then waits for the command's arguments on stdin and
   * becomes bubblewrap. Joining a cgroup waits for an RCU grace period in the kernel (milliseconds
   * on a busy machine); made ready after each command, that wait is no longer part of the next
   * command's start. Every process of the command (bubblewrap included) is still counted and
   * limited from its first instruction.
   */
  #spawnLauncher(): Launcher {
    const cgroup = this.#idle.pop() ?? this.#limiter.create(this.#policy.limits);
    try {
      const child = spawnLauncher(LAUNCHER_SCRIPT, cgroup, this.workspaceLimits(), [
        'pipe',
        'pipe',
        'pipe',
      ]);
      // Until a command takes it nobody else listens: a failed spawn must not be unhandled.
      child.on('error', () => undefined);
      child.stdin?.on('error', () => undefined);
      return { child, cgroup };
    } catch (error) {
      cgroup.remove();
      throw error;
    }
  }

  /** Ends a launcher that never ran a command, and its cgroup once empty. */
  #retire(launcher: Launcher): Promise<void> {
    const { child, cgroup } = launcher;
    const closed =
      child.exitCode !== null || child.signalCode !== null || child.pid === undefined
        ? Promise.resolve()
        : new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin?.destroy();
    cgroup.killAll();
    return closed.then(() => {
      if (!cgroup.remove()) this.#leftovers.push(cgroup);
    });
  }

  /**
   * Git inside is shown Baton's directory only while the workspace's `.git` is the file Baton
   * wrote: shadowing anything else would make bubblewrap fail (a directory) or create it.
   */
  #dotGitIsFile(): boolean {
    try {
      return lstatSync(path.join(this.workspace, '.git')).isFile();
    } catch {
      return false;
    }
  }

  async dispose(): Promise<void> {
    if (
      this.disposed &&
      this.running.size === 0 &&
      this.#leftovers.length === 0 &&
      this.#idle.length === 0 &&
      this.#next === undefined
    ) {
      return;
    }
    await this.stopAll();
    const next = this.#next;
    this.#next = undefined;
    if (next !== undefined) await this.#retire(next);
    await this.#holder?.close();
    await this.#proxy?.close();
    for (const cgroup of [...this.#leftovers.splice(0), ...this.#idle.splice(0)]) cgroup.remove();
    rmSync(this.#tmp, { recursive: true, force: true });
  }
}

class HostCommands extends TrackedCommands {
  readonly description: SandboxDescription;
  protected readonly workspace: string;
  readonly #policy: SandboxPolicy;

  constructor(workspace: string, reason: 'opted-out' | 'simulator', policy: SandboxPolicy) {
    super();
    this.workspace = workspace;
    this.#policy = policy;
    this.description = describeSandbox({ mode: 'off', reason });
  }

  protected defaultTimeoutMs(): number {
    return this.#policy.limits.commandTimeoutMs;
  }

  protected workspaceLimits(): WorkspaceUsage {
    return workspaceLimits(this.#policy);
  }

  protected start(
    command: string,
    options: Pick<RunCommandOptions, 'env'>,
    stdin: 'ignore' | 'pipe' = 'ignore',
  ) {
    const env = commandEnvironment(
      this.workspace,
      process.env.PATH ?? SANDBOX_PATH,
      os.tmpdir(),
      options.env,
    );
    const child = spawn('bash', ['-c', command], {
      cwd: this.workspace,
      env,
      detached: true,
      stdio: [stdin, 'pipe', 'pipe'],
    });
    // Without a pid namespace the process group is what a command owns; a child that calls
    // setsid() escapes it, which is one of the reasons this mode is not a sandbox.
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    };
    const settled = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    return { child, killAll: killGroup, settled, cleanup: () => undefined };
  }

  protected startChild(command: string, options: StartProcessOptions) {
    return this.start(command, options.env === undefined ? {} : { env: options.env }, 'pipe');
  }

  async dispose(): Promise<void> {
    await this.stopAll();
  }
}

/**
 * Open the command runner of one session. `bubblewrap` probes the machine first
 * (`requireSandbox`): it throws `WorkspaceError('sandbox_unavailable')` naming the fix rather
 * than run anything outside the sandbox. `off` runs commands on the host, clean environment only.
 */
export async function openCommandSandbox(
  options: OpenCommandSandboxOptions,
): Promise<CommandSandbox> {
  const { gitDir } = options;
  return openSandbox({
    workspace: options.workspace,
    setup: options.setup,
    // A git directory not made yet (no HEAD) is left out rather than failing every command.
    prepareGit:
      gitDir !== undefined && existsSync(path.join(gitDir, 'HEAD'))
        ? (into) => prepareSandboxGit(gitDir, into)
        : undefined,
  });
}

/** What `openSandbox` mounts besides what every session's commands get. */
export interface OpenSandboxOptions {
  workspace: string;
  setup: SandboxSetup;
  /** Writes, under the session's private directory, the git git inside is shown. */
  prepareGit?: ((into: string) => Promise<SandboxGit>) | undefined;
  /** A host directory shown read-only at `SANDBOX_HOOKS_DIR` (a checkpoint's hooks). */
  hooks?: string | undefined;
}

/** `openCommandSandbox` with the mounts of a checkpoint's hooks (`hook-runner.ts`). */
export async function openSandbox(options: OpenSandboxOptions): Promise<CommandSandbox> {
  const { workspace, setup } = options;
  if (setup.mode === 'off') {
    return new HostCommands(workspace, setup.reason, setup.policy ?? DEFAULT_SANDBOX_POLICY);
  }
  const ready = requireSandbox({ needsProxy: setup.policy.network.allowedHosts.length > 0 });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'baton-sandbox-'));
  let proxy: FilteringProxy | undefined;
  let etc: string;
  let git: SandboxGit | undefined;
  let holder: NetworkHolder | undefined;
  let step = 'its files could not be prepared';
  try {
    // The sandbox's /tmp; the socket and git's files sit beside it, out of the commands' reach.
    mkdirSync(path.join(tmp, 'tmp'), { mode: 0o700 });
    etc = etcSnapshot();
    if (options.prepareGit !== undefined) git = await options.prepareGit(tmp);
    if (setup.policy.network.allowedHosts.length > 0) {
      step = 'its network proxy could not start';
      proxy = await startFilteringProxy({
        socketPath: path.join(tmp, 'proxy.sock'),
        allowedHosts: setup.policy.network.allowedHosts,
        allowedPorts: setup.policy.network.allowedPorts,
      });
    }
    if (ready.nsenter !== undefined) {
      step = 'its network namespace could not be made';
      holder = await startNetworkHolder({
        bwrap: ready.bwrap,
        nsenter: ready.nsenter,
        proxySocket: proxy?.socketPath,
      });
    }
  } catch (error) {
    await proxy?.close();
    rmSync(tmp, { recursive: true, force: true });
    throw new WorkspaceError('sandbox_unavailable', `the sandbox could not be set up: ${step}`, {
      cause: error,
    });
  }
  return new BubblewrapSandbox({
    workspace,
    policy: setup.policy,
    bwrap: ready.bwrap,
    limiter: ready.limiter,
    tmp,
    etc,
    git,
    hooks: options.hooks,
    proxy,
    holder,
  });
}
