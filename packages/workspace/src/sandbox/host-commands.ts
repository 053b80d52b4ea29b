import { spawn } from 'node:child_process';
import os from 'node:os';
import { SANDBOX_PATH } from './bubblewrap.js';
import { commandEnvironment } from './command-environment.js';
import {
  type RunCommandOptions,
  type SandboxDescription,
  type StartProcessOptions,
  describeSandbox,
} from './command-sandbox.js';
import type { SandboxPolicy } from './policy.js';
import type { CommandStarter, StartedCommand } from './tracked-commands.js';
import { type WorkspaceUsage, workspaceLimits } from './workspace-usage.js';

/** Commands on the host, unsandboxed (`mode: 'off'`): a clean environment and the wall clock only. */
export class HostCommands implements CommandStarter {
  readonly description: SandboxDescription;
  readonly workspace: string;
  readonly #policy: SandboxPolicy;

  constructor(workspace: string, reason: 'opted-out' | 'simulator', policy: SandboxPolicy) {
    this.workspace = workspace;
    this.#policy = policy;
    this.description = describeSandbox({ mode: 'off', reason });
  }

  defaultTimeoutMs(): number {
    return this.#policy.limits.commandTimeoutMs;
  }

  workspaceLimits(): WorkspaceUsage {
    return workspaceLimits(this.#policy);
  }

  start(command: string, options: Pick<RunCommandOptions, 'env'>): StartedCommand {
    return this.#spawn(command, options.env, 'ignore');
  }

  startChild(command: string, options: StartProcessOptions): StartedCommand {
    return this.#spawn(command, options.env, 'pipe');
  }

  released(): boolean {
    return true;
  }

  async close(): Promise<void> {}

  #spawn(
    command: string,
    extraEnv: Readonly<Record<string, string>> | undefined,
    stdin: 'ignore' | 'pipe',
  ): StartedCommand {
    const env = commandEnvironment(
      this.workspace,
      process.env.PATH ?? SANDBOX_PATH,
      os.tmpdir(),
      extraEnv,
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
}
