import { type ChildProcess, spawn } from 'node:child_process';
import { WorkspaceError } from '../errors.js';
import type { CgroupLimiter, CommandCgroup } from './limits.js';
import type { SandboxPolicy } from './policy.js';
import { type WorkspaceUsage, workspaceLimits } from './workspace-usage.js';

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
        // eslint-disable-next-line no-restricted-syntax -- a child's env map: the variable is set only with a limit, never to undefined
        ...(cgroup.dataLimitKb === undefined
          ? {}
          : { BATON_DATA_LIMIT_KB: String(cgroup.dataLimitKb) }),
      },
      detached: true,
      stdio,
    },
  );
}

/**
 * One sandbox's cgroups and launchers: a launcher per command, made ready in its cgroup after
 * the previous command; empty cgroups reused; cgroups still busy kept to remove at the end.
 */
export class LauncherPool {
  readonly #limiter: CgroupLimiter;
  readonly #policy: SandboxPolicy;
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

  constructor(limiter: CgroupLimiter, policy: SandboxPolicy) {
    this.#limiter = limiter;
    this.#policy = policy;
  }

  /** The launcher made ready after the previous command, or a new one if it is gone. */
  take(): Launcher {
    const ready = this.#next;
    this.#next = undefined;
    if (ready !== undefined) {
      const { child } = ready;
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        return ready;
      }
      void this.#retire(ready);
    }
    return this.#spawn();
  }

  /**
   * A command ended: its cgroup is reused when empty (else removed), and the next command's
   * launcher made ready unless the sandbox is closing.
   */
  afterCommand(cgroup: CommandCgroup, sandboxClosed: boolean): void {
    if (sandboxClosed || !cgroup.empty()) {
      this.#remove(cgroup);
    } else {
      this.#idle.push(cgroup);
    }
    if (!sandboxClosed) this.#next ??= this.#spawn();
  }

  /** The launcher of a long-running process, arguments on fd 3 (`PROCESS_LAUNCHER_SCRIPT`). */
  startProcess(): Launcher {
    const cgroup = this.#idle.pop() ?? this.#limiter.create(this.#policy.limits);
    try {
      const child = spawnLauncher(PROCESS_LAUNCHER_SCRIPT, cgroup, workspaceLimits(this.#policy), [
        'pipe',
        'pipe',
        'pipe',
        'pipe',
      ]);
      return { child, cgroup };
    } catch (error) {
      cgroup.remove();
      throw new WorkspaceError('sandbox_unavailable', 'the process could not start', {
        cause: error,
      });
    }
  }

  /** A long-running process ended: its cgroup goes. */
  afterProcess(cgroup: CommandCgroup): void {
    this.#remove(cgroup);
  }

  /** True when no cgroup or launcher is left. */
  released(): boolean {
    return this.#leftovers.length === 0 && this.#idle.length === 0 && this.#next === undefined;
  }

  /** Ends the launcher made ready for a next command that will not come. */
  async retireNext(): Promise<void> {
    const next = this.#next;
    this.#next = undefined;
    if (next !== undefined) await this.#retire(next);
  }

  /** Removes every cgroup left (the sandbox's processes are gone). */
  removeAll(): void {
    for (const cgroup of [...this.#leftovers.splice(0), ...this.#idle.splice(0)]) cgroup.remove();
  }

  #remove(cgroup: CommandCgroup): void {
    if (!cgroup.remove()) this.#leftovers.push(cgroup);
  }

  /**
   * A shell that joins a command's cgroups, then waits for the command's arguments on stdin and
   * becomes bubblewrap. Joining a cgroup waits for an RCU grace period in the kernel (milliseconds
   * on a busy machine); made ready after each command, that wait is no longer part of the next
   * command's start. Every process of the command (bubblewrap included) is still counted and
   * limited from its first instruction.
   */
  #spawn(): Launcher {
    const cgroup = this.#idle.pop() ?? this.#limiter.create(this.#policy.limits);
    try {
      const child = spawnLauncher(LAUNCHER_SCRIPT, cgroup, workspaceLimits(this.#policy), [
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
    return closed.then(() => this.#remove(cgroup));
  }
}
