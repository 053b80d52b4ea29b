import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkspaceError } from '../errors.js';
import { bubblewrapArguments, systemMounts } from './bubblewrap.js';
import { etcSnapshot } from './etc-snapshot.js';
import {
  type CgroupLimiter,
  type LimitsEnforcement,
  cgroupProblem,
  findCgroupLimiter,
  rlimitLimiter,
} from './limits.js';
import { DEFAULT_SANDBOX_POLICY } from './policy.js';

/** What this machine offers for sandboxing commands. */
export type SandboxProbe =
  | {
      usable: true;
      /** Path of the `bwrap` binary used. */
      bwrap: string;
      /** `bwrap --version`, e.g. `bubblewrap 0.8.0`. */
      version: string;
      limits: LimitsEnforcement;
      /** With `limits: 'rlimit'`: why no cgroup could be used. */
      limitsProblem?: string | undefined;
      /** Whether `socat` is installed (needed only by projects that allow network hosts). */
      socat: boolean;
      /**
       * Whether a session's commands and MCP servers share one network namespace (one loopback):
       * needs util-linux `nsenter` and a user namespace that can be joined.
       */
      sharedLoopback: boolean;
      /** With `sharedLoopback: false`: why, in a few words. */
      sharedLoopbackProblem?: string | undefined;
    }
  | {
      usable: false;
      /** What is wrong, in a few words. */
      problem: string;
      /** What to do about it. */
      fix: string;
    };

function findProgram(name: string, searchPath: string): string | undefined {
  for (const directory of searchPath.split(':')) {
    if (directory === '') continue;
    const candidate = path.join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/**
 * Whether a command can join a held network namespace here (`network-holder.ts`): a holder is
 * started, a sandbox joins it with `nsenter` and exits 0. `undefined` when it can, else why not.
 */
function sharedLoopbackProblem(
  bwrap: string,
  nsenter: string | undefined,
  commandArgs: string[],
  scratch: string,
): string | undefined {
  if (nsenter === undefined) return 'nsenter (util-linux) is not installed';
  const info = path.join(scratch, 'holder-info');
  const holder = [
    bwrap,
    '--unshare-user',
    '--unshare-net',
    '--unshare-pid',
    '--die-with-parent',
    '--info-fd',
    '3',
    ...systemMounts(),
    '--',
    '/bin/sleep',
    '10',
  ];
  const join = [nsenter, '--target', '"$pid"', '--user', '--net', '--preserve-credentials', '--'];
  const script = [
    `${holder.map(quote).join(' ')} 3>${quote(info)} </dev/null >/dev/null 2>&1 & holder=$!`,
    `i=0; until grep -q child-pid ${quote(info)} 2>/dev/null; do i=$((i+1)); [ "$i" -gt 500 ] && { kill $holder; exit 3; }; sleep 0.01; done`,
    `pid=$(sed -n 's/.*"child-pid": *\\([0-9]*\\).*/\\1/p' ${quote(info)})`,
    `${join.map((word) => (word === '"$pid"' ? word : quote(word))).join(' ')} ${[bwrap, ...commandArgs, '/bin/sh', '-c', 'exit 0'].map(quote).join(' ')} 2>&1; status=$?`,
    'kill $holder; exit $status',
  ].join('\n');
  const run = spawnSync('/bin/bash', ['-c', script], {
    encoding: 'utf8',
    timeout: 15_000,
    env: { PATH: '/usr/bin:/bin' },
  });
  if (run.status === 0) return undefined;
  const reason = (run.stdout || run.error?.message || 'no output').trim().split('\n')[0];
  return `a session's network namespace cannot be joined here (${reason})`;
}

function probe(searchPath: string): SandboxProbe & {
  limiter?: CgroupLimiter;
  nsenter?: string | undefined;
} {
  const bwrap = findProgram('bwrap', searchPath);
  if (bwrap === undefined) {
    return {
      usable: false,
      problem: 'bubblewrap (bwrap) is not installed',
      fix: 'install it (apt-get install bubblewrap, dnf install bubblewrap)',
    };
  }
  // Without a cgroup the sandbox still isolates; only the limits are weaker, and that is said.
  const cgroups = findCgroupLimiter();
  const limiter = cgroups ?? rlimitLimiter();
  const limitsProblem = cgroups === undefined ? cgroupProblem() : undefined;
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'baton-sandbox-probe-'));
  try {
    const workspace = path.join(scratch, 'workspace');
    const tmp = path.join(scratch, 'tmp');
    mkdirSync(workspace);
    mkdirSync(tmp);
    const args = bubblewrapArguments(
      { workspace, tmp, etc: etcSnapshot() },
      DEFAULT_SANDBOX_POLICY,
      {},
    );
    const run = spawnSync(bwrap, [...args, '/bin/sh', '-c', 'exit 0'], {
      encoding: 'utf8',
      timeout: 10_000,
      env: { PATH: '/usr/bin:/bin' },
    });
    if (run.status !== 0) {
      const reason = (run.stderr || run.error?.message || 'no output').trim().split('\n')[0];
      return {
        usable: false,
        problem: `bubblewrap cannot create a sandbox here (${reason})`,
        fix: 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0)',
      };
    }
    const version = spawnSync(bwrap, ['--version'], { encoding: 'utf8' }).stdout.trim();
    const nsenter = findProgram('nsenter', searchPath);
    const joinedArgs = bubblewrapArguments(
      { workspace, tmp, etc: etcSnapshot(), sharedNetwork: true },
      DEFAULT_SANDBOX_POLICY,
      {},
    );
    const loopbackProblem = sharedLoopbackProblem(bwrap, nsenter, joinedArgs, scratch);
    return {
      usable: true,
      bwrap,
      version,
      limits: limiter.enforcement,
      limitsProblem,
      socat: findProgram('socat', searchPath) !== undefined,
      sharedLoopback: loopbackProblem === undefined,
      sharedLoopbackProblem: loopbackProblem,
      limiter,
      nsenter: loopbackProblem === undefined ? nsenter : undefined,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const cache = new Map<string, ReturnType<typeof probe>>();

/**
 * Check once per process (per `PATH`) that commands can be sandboxed here: `bwrap` found on
 * `PATH`, a cgroup for limits, and a real sandbox started. Takes a few ms the first time.
 */
export function probeSandbox(options: { path?: string | undefined } = {}): SandboxProbe {
  const searchPath = options.path ?? process.env.PATH ?? '/usr/bin:/bin';
  let result = cache.get(searchPath);
  if (result === undefined) {
    result = probe(searchPath);
    cache.set(searchPath, result);
  }
  if (!result.usable) return result;
  const { limiter: _limiter, nsenter: _nsenter, ...visible } = result;
  return visible;
}

/** The one line an entry point prints when it refuses to start sessions without a sandbox. */
export function sandboxUnavailableMessage(probeResult: { problem: string; fix: string }): string {
  return `Commands cannot be sandboxed: ${probeResult.problem}. Fix: ${probeResult.fix}, or opt out with BATON_SANDBOX=off / --no-sandbox.`;
}

/** The binary and limiter of a usable sandbox; throws `WorkspaceError('sandbox_unavailable')`. */
export function requireSandbox(options: { needsProxy: boolean; path?: string | undefined }): {
  bwrap: string;
  limiter: CgroupLimiter;
  /** Set when sessions get one network namespace each (`probe.sharedLoopback`). */
  nsenter?: string | undefined;
} {
  probeSandbox({ path: options.path });
  const result = cache.get(options.path ?? process.env.PATH ?? '/usr/bin:/bin');
  if (result === undefined || !result.usable || result.limiter === undefined) {
    throw new WorkspaceError(
      'sandbox_unavailable',
      result !== undefined && !result.usable
        ? sandboxUnavailableMessage(result)
        : 'Commands cannot be sandboxed.',
    );
  }
  if (options.needsProxy && !result.socat) {
    throw new WorkspaceError(
      'sandbox_unavailable',
      'The project allows network hosts but socat is not installed. Fix: install it (apt-get install socat).',
    );
  }
  return { bwrap: result.bwrap, limiter: result.limiter, nsenter: result.nsenter };
}
