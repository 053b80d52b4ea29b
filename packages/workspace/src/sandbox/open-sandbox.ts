import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkspaceError } from '../errors.js';
import type { SandboxGit } from './bubblewrap.js';
import { BubblewrapCommands } from './bubblewrap-commands.js';
import type { CommandSandbox, OpenCommandSandboxOptions, SandboxSetup } from './command-sandbox.js';
import { etcSnapshot } from './etc-snapshot.js';
import { HostCommands } from './host-commands.js';
import { type NetworkHolder, startNetworkHolder } from './network-holder.js';
import { type FilteringProxy, startFilteringProxy } from './network-proxy.js';
import { DEFAULT_SANDBOX_POLICY } from './policy.js';
import { requireSandbox } from './probe.js';
import { prepareSandboxGit } from './sandbox-git.js';
import { TrackedCommands } from './tracked-commands.js';

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
    return new TrackedCommands(
      new HostCommands(workspace, setup.reason, setup.policy ?? DEFAULT_SANDBOX_POLICY),
    );
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
  return new TrackedCommands(
    new BubblewrapCommands({
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
    }),
  );
}
