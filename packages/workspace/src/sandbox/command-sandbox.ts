import type { Readable, Writable } from 'node:stream';
import type { BubblewrapDescription, SandboxDescription } from './description.js';
import { DEFAULT_SANDBOX_POLICY, type SandboxPolicy } from './policy.js';

/** How one command of a session runs. */
export interface RunCommandOptions {
  /** Extra environment entries (never the worker's own environment). Default none. */
  env?: Readonly<Record<string, string>> | undefined;
  /** Wall clock of this command in ms. Default: the policy's `limits.commandTimeoutMs`. */
  timeoutMs?: number | undefined;
  /** Aborting it kills every process of the command. */
  signal?: AbortSignal | undefined;
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
  stopped?: 'timeout' | 'aborted' | 'workspace-full' | undefined;
  /**
   * Set when the workspace is over its limits (`limits.workspaceMb`, `workspaceFiles`) once the
   * command ended: one line for the model and events, naming the setting and no host path.
   */
  workspaceFull?: string | undefined;
  /** Set when the command could not start at all (a plain sentence, no host paths). */
  startError?: string | undefined;
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
  gitDir?: string | undefined;
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
