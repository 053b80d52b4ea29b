import { describe, expect, it } from 'vitest';
import { WorkspaceError } from '../errors.js';
import { describeSandbox, summarizeSandbox } from './command-sandbox.js';
import { decideSandbox, describeSandboxDecision, sessionSandboxSetup } from './decide.js';
import { DEFAULT_SANDBOX_POLICY, parseSandboxSetting, resolveSandboxPolicy } from './policy.js';
import type { SandboxProbe } from './probe.js';

const usable: SandboxProbe = {
  usable: true,
  bwrap: '/usr/bin/bwrap',
  version: 'bubblewrap 0.8.0',
  limits: 'cgroup-v1',
  socat: true,
  sharedLoopback: true,
};
const missing: SandboxProbe = {
  usable: false,
  problem: 'bubblewrap (bwrap) is not installed',
  fix: 'install it (apt-get install bubblewrap, dnf install bubblewrap)',
};

describe('decideSandbox: no silent downgrade', () => {
  const on = parseSandboxSetting(undefined);
  const off = parseSandboxSetting('off');
  it.each([
    ['on, usable, real model', on, usable, false, 'sandboxed'],
    ['on, usable, simulator', on, usable, true, 'sandboxed'],
    ['on, unusable, real model', on, missing, false, 'refused'],
    ['on, unusable, simulator', on, missing, true, 'unsandboxed'],
    ['off, usable', off, usable, false, 'unsandboxed'],
    ['off, unusable', off, missing, false, 'unsandboxed'],
  ] as const)('%s -> %s', (_name, setting, probe, simulator, kind) => {
    expect(decideSandbox(setting, { simulator, probe: () => probe }).kind).toBe(kind);
  });

  it('a refusal is one line naming the fix and the opt-out', () => {
    const decision = decideSandbox(on, { simulator: false, probe: () => missing });
    expect(decision).toEqual({
      kind: 'refused',
      message:
        'Commands cannot be sandboxed: bubblewrap (bwrap) is not installed. Fix: install it (apt-get install bubblewrap, dnf install bubblewrap), or opt out with BATON_SANDBOX=off / --no-sandbox.',
    });
  });

  it('--no-sandbox wins over BATON_SANDBOX=on; the opt-out and simulator reasons reach the session', () => {
    expect(parseSandboxSetting('on', { noSandbox: true })).toEqual({ mode: 'off' });
    const optedOut = decideSandbox(off, { simulator: false, probe: () => usable });
    if (optedOut.kind === 'refused') throw new Error('unexpected');
    expect(sessionSandboxSetup(optedOut, null)).toEqual({ mode: 'off', reason: 'opted-out' });
  });
});

describe('without a usable cgroup', () => {
  const noCgroup: SandboxProbe = {
    ...usable,
    limits: 'rlimit',
    limitsProblem:
      "cgroup v2: the memory and pids controllers are not delegated to the worker's cgroup",
  };

  it('a real model is still sandboxed, never refused, and the start line and sessions say so', () => {
    const decision = decideSandbox(parseSandboxSetting(undefined), {
      simulator: false,
      probe: () => noCgroup,
    });
    expect(decision.kind).toBe('sandboxed');
    if (decision.kind !== 'sandboxed') throw new Error('unexpected');
    expect(describeSandboxDecision(decision)).toBe(
      "commands sandboxed (bubblewrap 0.8.0, NO CGROUP: cgroup v2: the memory and pids controllers are not delegated to the worker's cgroup; isolated as always, but memory is limited per process only and processes are not limited; no network; per command 120 s, 2048 MiB per process)",
    );
    const setup = sessionSandboxSetup(decision, null);
    expect(setup).toMatchObject({ mode: 'bubblewrap', limits: 'rlimit' });
    expect(summarizeSandbox(describeSandbox(setup))).toBe(
      'sandboxed (bubblewrap): no network; per command 120 s, 2048 MiB per process, processes not limited (no cgroup)',
    );
  });
});

describe('without nsenter', () => {
  it('the start line says that commands and MCP servers do not share a loopback, and why', () => {
    const decision = decideSandbox(parseSandboxSetting(undefined), {
      simulator: false,
      probe: () => ({
        ...usable,
        sharedLoopback: false,
        sharedLoopbackProblem: 'nsenter (util-linux) is not installed',
      }),
    });
    if (decision.kind !== 'sandboxed') throw new Error('unexpected');
    expect(describeSandboxDecision(decision)).toBe(
      'commands sandboxed (bubblewrap 0.8.0, cgroup-v1; no network; per command 120 s, 2048 MiB, 512 processes; NO SHARED LOOPBACK: nsenter (util-linux) is not installed, so each command has its own loopback and an app started from bash is not reachable by MCP servers)',
    );
  });
});

describe('the policy', () => {
  it('BATON_SANDBOX takes a JSON policy and names a wrong field in one line', () => {
    const setting = parseSandboxSetting(
      '{"network":{"allowedHosts":["Registry.npmjs.org"]},"limits":{"memoryMb":4096}}',
    );
    expect(setting).toMatchObject({
      mode: 'on',
      policy: {
        network: { allowedHosts: ['registry.npmjs.org'] },
        limits: { memoryMb: 4096, processes: 512 },
      },
    });
    for (const [value, message] of [
      ['maybe', 'BATON_SANDBOX must be on, off or a JSON policy object, got "maybe"'],
      ['{"limits":{"memoryMb":1}}', 'BATON_SANDBOX.limits.memoryMb'],
      [
        '{"network":{"allowedHosts":["10.0.0.1"]}}',
        'BATON_SANDBOX.network.allowedHosts.0 must be a host name',
      ],
      ['{"nework":{}}', 'BATON_SANDBOX'],
    ]) {
      expect(() => parseSandboxSetting(value)).toThrow(WorkspaceError);
      expect(() => parseSandboxSetting(value)).toThrow(message);
    }
  });

  it('a project adds hosts and paths and can only lower limits', () => {
    const policy = resolveSandboxPolicy(DEFAULT_SANDBOX_POLICY, {
      allowedHosts: ['registry.npmjs.org'],
      limits: { memoryMb: 1_000_000, processes: 64, workspaceMb: 100_000, workspaceFiles: 500 },
    });
    expect(policy.network.allowedHosts).toEqual(['registry.npmjs.org']);
    expect(policy.limits).toEqual({
      commandTimeoutMs: 120_000,
      memoryMb: 2048,
      processes: 64,
      workspaceMb: 4096,
      workspaceFiles: 500,
    });
  });
});
