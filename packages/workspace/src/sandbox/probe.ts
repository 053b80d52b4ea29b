import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkspaceError } from '../errors.js';
import { bubblewrapArguments } from './bubblewrap.js';
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
      limitsProblem?: string;
      /** Whether `socat` is installed (needed only by projects that allow network hosts). */
      socat: boolean;
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

function probe(searchPath: string): SandboxProbe & { limiter?: CgroupLimiter } {
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
    return {
      usable: true,
      bwrap,
      version,
      limits: limiter.enforcement,
      ...(limitsProblem === undefined ? {} : { limitsProblem }),
      socat: findProgram('socat', searchPath) !== undefined,
      limiter,
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
export function probeSandbox(options: { path?: string } = {}): SandboxProbe {
  const searchPath = options.path ?? process.env.PATH ?? '/usr/bin:/bin';
  let result = cache.get(searchPath);
  if (result === undefined) {
    result = probe(searchPath);
    cache.set(searchPath, result);
  }
  if (!result.usable) return result;
  const { limiter: _limiter, ...visible } = result;
  return visible;
}

/** The one line an entry point prints when it refuses to start sessions without a sandbox. */
export function sandboxUnavailableMessage(probeResult: { problem: string; fix: string }): string {
  return `Commands cannot be sandboxed: ${probeResult.problem}. Fix: ${probeResult.fix}, or opt out with BATON_SANDBOX=off / --no-sandbox.`;
}

/** The binary and limiter of a usable sandbox; throws `WorkspaceError('sandbox_unavailable')`. */
export function requireSandbox(options: { needsProxy: boolean; path?: string }): {
  bwrap: string;
  limiter: CgroupLimiter;
} {
  probeSandbox(options.path === undefined ? {} : { path: options.path });
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
  return { bwrap: result.bwrap, limiter: result.limiter };
}
