import { type SandboxSetup, unsandboxedNotice } from './command-sandbox.js';
import {
  type ProjectSandbox,
  type SandboxPolicy,
  type SandboxSetting,
  resolveSandboxPolicy,
} from './policy.js';
import { type SandboxProbe, probeSandbox, sandboxUnavailableMessage } from './probe.js';

/** What an entry point (worker, `baton run`) does with commands, decided once at start. */
export type SandboxDecision =
  /** Every command in the sandbox, under this worker policy (plus each project's settings). */
  | { kind: 'sandboxed'; policy: SandboxPolicy; probe: Extract<SandboxProbe, { usable: true }> }
  /** Commands unsandboxed: opted out, or the simulator's own commands on a host without one. */
  | { kind: 'unsandboxed'; reason: 'opted-out' | 'simulator'; notice: string }
  /** No session may start: the one line names the fix. */
  | { kind: 'refused'; message: string };

/** Options of `decideSandbox`. */
export interface DecideSandboxOptions {
  /** The model is Baton's built-in simulator, whose commands are Baton's own scripted ones. */
  simulator: boolean;
  /** Probes the machine. Default `probeSandbox`. */
  probe?: (() => SandboxProbe) | undefined;
}

/**
 * No silent downgrade, as one table: sandbox on and usable → sandboxed; on and unusable →
 * refused (unless the model is the simulator, whose scripted commands may then run unsandboxed,
 * said in one line); off → unsandboxed, said loudly wherever the worker shows.
 */
export function decideSandbox(
  setting: SandboxSetting,
  options: DecideSandboxOptions,
): SandboxDecision {
  if (setting.mode === 'off') {
    return { kind: 'unsandboxed', reason: 'opted-out', notice: unsandboxedNotice('opted-out') };
  }
  const probe = (options.probe ?? probeSandbox)();
  if (probe.usable) return { kind: 'sandboxed', policy: setting.policy, probe };
  if (options.simulator) {
    return { kind: 'unsandboxed', reason: 'simulator', notice: unsandboxedNotice('simulator') };
  }
  return { kind: 'refused', message: sandboxUnavailableMessage(probe) };
}

/** The sandbox setup of one session of a project, from the entry point's decision. */
export function sessionSandboxSetup(
  decision: Exclude<SandboxDecision, { kind: 'refused' }>,
  project: ProjectSandbox | null | undefined,
): SandboxSetup {
  if (decision.kind === 'unsandboxed') return { mode: 'off', reason: decision.reason };
  return {
    mode: 'bubblewrap',
    policy: resolveSandboxPolicy(decision.policy, project ?? undefined),
    limits: decision.probe.limits,
  };
}

/** One line describing a decision for start-up logs and `baton run`'s banner. */
export function describeSandboxDecision(decision: SandboxDecision): string {
  if (decision.kind === 'refused') return decision.message;
  if (decision.kind === 'unsandboxed') return decision.notice;
  const { network, limits } = decision.policy;
  const hosts =
    network.allowedHosts.length === 0
      ? 'no network'
      : `network: ${network.allowedHosts.join(', ')}`;
  const loopback = decision.probe.sharedLoopback
    ? ''
    : `; NO SHARED LOOPBACK: ${decision.probe.sharedLoopbackProblem ?? 'unknown'}, so each command has its own loopback and an app started from bash is not reachable by MCP servers`;
  if (decision.probe.limits === 'rlimit') {
    return `commands sandboxed (${decision.probe.version}, NO CGROUP: ${decision.probe.limitsProblem ?? 'none usable'}; isolated as always, but memory is limited per process only and processes are not limited; ${hosts}; per command ${limits.commandTimeoutMs / 1000} s, ${limits.memoryMb} MiB per process${loopback})`;
  }
  return `commands sandboxed (${decision.probe.version}, ${decision.probe.limits}; ${hosts}; per command ${limits.commandTimeoutMs / 1000} s, ${limits.memoryMb} MiB, ${limits.processes} processes${loopback})`;
}
