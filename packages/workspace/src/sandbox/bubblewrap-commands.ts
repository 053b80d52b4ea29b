import { lstatSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import {
  SANDBOX_PATH,
  SANDBOX_PROXY_PORT,
  type SandboxGit,
  bubblewrapArguments,
  sandboxedCommand,
} from './bubblewrap.js';
import { commandEnvironment } from './command-environment.js';
import type {
  RunCommandOptions,
  SandboxDescription,
  StartProcessOptions,
} from './command-sandbox.js';
import { LauncherPool } from './launchers.js';
import type { CgroupLimiter } from './limits.js';
import type { NetworkHolder } from './network-holder.js';
import type { FilteringProxy } from './network-proxy.js';
import type { SandboxPolicy } from './policy.js';
import type { CommandStarter, StartedCommand } from './tracked-commands.js';
import { type WorkspaceUsage, workspaceLimits } from './workspace-usage.js';

/** What `openSandbox` prepared for one session's bubblewrap commands. */
interface BubblewrapCommandsOptions {
  workspace: string;
  policy: SandboxPolicy;
  bwrap: string;
  limiter: CgroupLimiter;
  /** The session's private directory on the host: the sandbox's `/tmp` and what sits beside it. */
  tmp: string;
  etc: string;
  git: SandboxGit | undefined;
  hooks: string | undefined;
  proxy: FilteringProxy | undefined;
  /** The session's network namespace, joined by every command and process; none without nsenter. */
  holder: NetworkHolder | undefined;
}

/** Commands in bubblewrap: each one's argv, started by a launcher in its cgroups. */
export class BubblewrapCommands implements CommandStarter {
  readonly description: SandboxDescription;
  readonly workspace: string;
  readonly #options: BubblewrapCommandsOptions;
  readonly #policy: SandboxPolicy;
  readonly #launchers: LauncherPool;

  constructor(options: BubblewrapCommandsOptions) {
    this.workspace = options.workspace;
    this.#options = options;
    this.#policy = options.policy;
    this.#launchers = new LauncherPool(options.limiter, options.policy);
    this.description = {
      mode: 'bubblewrap',
      policy: options.policy,
      limits: options.limiter.enforcement,
    };
  }

  defaultTimeoutMs(): number {
    return this.#policy.limits.commandTimeoutMs;
  }

  workspaceLimits(): WorkspaceUsage {
    return workspaceLimits(this.#policy);
  }

  start(command: string, options: RunCommandOptions): StartedCommand {
    const argv = this.#bubblewrapArgv(command, options.env, []);
    const { child, cgroup } = this.#launchers.take();
    // NUL cannot occur in an argument, so it separates them.
    child.stdin?.end(argv.map((argument) => `${argument}\0`).join(''));
    return {
      child,
      killAll: () => cgroup.killAll(),
      settled: () => cgroup.empty(),
      cleanup: (sandboxClosed) => this.#launchers.afterCommand(cgroup, sandboxClosed),
    };
  }

  startChild(command: string, options: StartProcessOptions): StartedCommand {
    const argv = this.#bubblewrapArgv(command, options.env, options.readOnlyPaths ?? []);
    const { child, cgroup } = this.#launchers.startProcess();
    const args = child.stdio[3] as Writable | null;
    args?.on('error', () => undefined);
    args?.end(argv.map((argument) => `${argument}\0`).join(''));
    return {
      child,
      killAll: () => cgroup.killAll(),
      settled: () => cgroup.empty(),
      cleanup: () => this.#launchers.afterProcess(cgroup),
    };
  }

  released(): boolean {
    return this.#launchers.released();
  }

  async close(): Promise<void> {
    await this.#launchers.retireNext();
    await this.#options.holder?.close();
    await this.#options.proxy?.close();
    this.#launchers.removeAll();
    rmSync(this.#options.tmp, { recursive: true, force: true });
  }

  /** bubblewrap and its arguments for one command of this session. */
  #bubblewrapArgv(
    command: string,
    extraEnv: Readonly<Record<string, string>> | undefined,
    readOnlyPaths: readonly string[],
  ): string[] {
    const { proxy, holder, git, hooks } = this.#options;
    const proxyEnv: Record<string, string> = {};
    if (proxy !== undefined) {
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
        tmp: path.join(this.#options.tmp, 'tmp'),
        etc: this.#options.etc,
        // Joined to the holder's namespace, the holder forwards the proxy port for everyone.
        proxySocket: holder === undefined ? proxy?.socketPath : undefined,
        sharedNetwork: holder !== undefined,
        git: git !== undefined && this.#dotGitIsFile() ? git : undefined,
        hooks,
      },
      policy,
      env,
    );
    if (holder !== undefined) {
      return [...holder.join, this.#options.bwrap, ...args, ...sandboxedCommand(command, false)];
    }
    return [this.#options.bwrap, ...args, ...sandboxedCommand(command, proxy !== undefined)];
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
}
