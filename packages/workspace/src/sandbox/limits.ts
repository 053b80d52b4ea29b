import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * How memory and process limits are enforced: a cgroup per command (v1 or v2 hierarchy), or,
 * where no cgroup can be used, per-process resource limits only (`rlimit`: memory per process
 * through RLIMIT_DATA, processes not limited; the wall clock and the sandbox's isolation as
 * always).
 */
export type LimitsEnforcement = 'cgroup-v1' | 'cgroup-v2' | 'rlimit';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** Why no cgroup limiter was found, for the start-up line. */
let lastProblem = 'no writable cgroup with the memory and pids controllers';

/** One command's cgroup(s): processes join them before bubblewrap starts. */
export interface CommandCgroup {
  /** `cgroup.procs` files the command's first process writes its pid into. */
  procsFiles: string[];
  /** Set without cgroups: the RLIMIT_DATA (KiB) of every process of the command. */
  dataLimitKb?: number;
  /** SIGKILL every process still in the cgroup(s). */
  killAll(): void;
  /** True when no process is left in the cgroup(s). */
  empty(): boolean;
  /** Kill what is left and remove the cgroup(s); false while exiting processes keep one busy. */
  remove(): boolean;
}

/** Creates a cgroup per command with the policy's memory and process limits. */
export interface CgroupLimiter {
  enforcement: LimitsEnforcement;
  create(limits: { memoryMb: number; processes: number }): CommandCgroup;
}

/** This process's cgroup path in the hierarchy of `controller` (`''` = the v2 unified one). */
function ownCgroup(controller: string): string | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [, controllers, where] = line.match(/^\d+:([^:]*):(.*)$/) ?? [];
    if (controllers === undefined || where === undefined) continue;
    if (controllers.split(',').includes(controller)) return where;
  }
  return undefined;
}

function pidsOf(directory: string): number[] {
  try {
    return readFileSync(path.join(directory, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

function killPids(directory: string): void {
  for (const pid of pidsOf(directory)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Exited meanwhile.
    }
  }
}

function removeDirectory(directory: string): boolean {
  killPids(directory);
  try {
    rmdirSync(directory);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function name(): string {
  return `baton-sandbox-${process.pid}-${randomBytes(6).toString('hex')}`;
}

function v1Limiter(): CgroupLimiter | undefined {
  const memoryParent = ownCgroup('memory');
  const pidsParent = ownCgroup('pids');
  if (memoryParent === undefined || pidsParent === undefined) return undefined;
  const memoryBase = path.join(CGROUP_ROOT, 'memory', memoryParent);
  const pidsBase = path.join(CGROUP_ROOT, 'pids', pidsParent);
  if (!existsSync(path.join(memoryBase, 'cgroup.procs'))) return undefined;
  if (!existsSync(path.join(pidsBase, 'cgroup.procs'))) return undefined;
  return {
    enforcement: 'cgroup-v1',
    create(limits) {
      const id = name();
      const memory = path.join(memoryBase, id);
      const pids = path.join(pidsBase, id);
      mkdirSync(memory);
      try {
        mkdirSync(pids);
        const bytes = String(limits.memoryMb * 1024 * 1024);
        writeFileSync(path.join(memory, 'memory.limit_in_bytes'), bytes);
        // Swap counts too where the kernel accounts it, so a command cannot page its way out.
        const memsw = path.join(memory, 'memory.memsw.limit_in_bytes');
        if (existsSync(memsw)) writeFileSync(memsw, bytes);
        writeFileSync(path.join(pids, 'pids.max'), String(limits.processes));
      } catch (error) {
        removeDirectory(memory);
        removeDirectory(pids);
        throw error;
      }
      return {
        procsFiles: [path.join(memory, 'cgroup.procs'), path.join(pids, 'cgroup.procs')],
        killAll() {
          killPids(memory);
          killPids(pids);
        },
        empty() {
          return pidsOf(memory).length === 0 && pidsOf(pids).length === 0;
        },
        remove() {
          const memoryGone = removeDirectory(memory);
          return removeDirectory(pids) && memoryGone;
        },
      };
    },
  };
}

/** The outcome of `delegateCgroupV2`. */
export type CgroupV2Delegation =
  | {
      ok: true;
      /** The cgroup whose children get the controllers: the worker's own, now without processes. */
      base: string;
      /** Where this process (and every other process of `base`) now is; unset when nothing moved. */
      leaf?: string;
    }
  | { ok: false; reason: string };

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'error';
}

/**
 * Makes `controllers` available to new child cgroups of this process's own cgroup `own` on the
 * v2 hierarchy mounted at `root`, the standard way (what container entry points do for nested
 * runtimes, and what systemd's `Delegate=yes` allows): a cgroup that holds processes cannot
 * enable controllers for its children ("no internal processes", EBUSY), so every process of it
 * (this one first) moves into a leaf child `baton-worker`, then the controllers are enabled in
 * its `cgroup.subtree_control`. Command cgroups are then created beside the leaf.
 */
export function delegateCgroupV2(options: {
  root: string;
  own: string;
  controllers: readonly string[];
}): CgroupV2Delegation {
  const base = path.join(options.root, options.own);
  const wanted = options.controllers;
  let available: string[];
  try {
    available = readFileSync(path.join(base, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  } catch (error) {
    return { ok: false, reason: `cannot read cgroup.controllers (${errorCode(error)})` };
  }
  const missing = wanted.filter((controller) => !available.includes(controller));
  if (missing.length > 0) {
    return {
      ok: false,
      reason: `the ${missing.join(' and ')} controller${missing.length > 1 ? 's are' : ' is'} not delegated to the worker's cgroup`,
    };
  }
  const subtree = path.join(base, 'cgroup.subtree_control');
  const enabled = () => {
    try {
      const text = readFileSync(subtree, 'utf8').trim().split(/\s+/);
      return wanted.every((controller) => text.includes(controller));
    } catch {
      return false;
    }
  };
  if (enabled()) return { ok: true, base };
  const enable = wanted.map((controller) => `+${controller}`).join(' ');
  try {
    writeFileSync(subtree, enable);
    return { ok: true, base };
  } catch (error) {
    if (errorCode(error) !== 'EBUSY') {
      return {
        ok: false,
        reason: `cgroup.subtree_control refused ${enable} (${errorCode(error)})`,
      };
    }
  }
  const leaf = path.join(base, 'baton-worker');
  try {
    mkdirSync(leaf, { recursive: true });
    // This process first, then whatever else shares the cgroup (a container's init, helpers).
    writeFileSync(path.join(leaf, 'cgroup.procs'), String(process.pid));
    for (let round = 0; round < 5 && pidsOf(base).length > 0; round += 1) {
      for (const pid of pidsOf(base)) {
        try {
          writeFileSync(path.join(leaf, 'cgroup.procs'), String(pid));
        } catch {
          // Exited meanwhile, or a kernel thread: the next round or the enable below says.
        }
      }
    }
    writeFileSync(subtree, enable);
  } catch (error) {
    return {
      ok: false,
      reason: `cannot delegate ${enable} from the worker's cgroup (${errorCode(error)}); run the worker with Delegate=yes or as a container's only process tree`,
    };
  }
  return { ok: true, base, leaf };
}

function v2Limiter(): CgroupLimiter | undefined {
  const parent = ownCgroup('');
  if (parent === undefined) return undefined;
  const delegation = delegateCgroupV2({
    root: CGROUP_ROOT,
    own: parent,
    controllers: ['memory', 'pids'],
  });
  if (!delegation.ok) {
    lastProblem = `cgroup v2: ${delegation.reason}`;
    return undefined;
  }
  const base = delegation.base;
  return {
    enforcement: 'cgroup-v2',
    create(limits) {
      const directory = path.join(base, name());
      mkdirSync(directory);
      try {
        writeFileSync(path.join(directory, 'memory.max'), String(limits.memoryMb * 1024 * 1024));
        const swap = path.join(directory, 'memory.swap.max');
        if (existsSync(swap)) writeFileSync(swap, '0');
        writeFileSync(path.join(directory, 'pids.max'), String(limits.processes));
      } catch (error) {
        removeDirectory(directory);
        throw error;
      }
      return {
        procsFiles: [path.join(directory, 'cgroup.procs')],
        killAll() {
          try {
            writeFileSync(path.join(directory, 'cgroup.kill'), '1');
          } catch {
            killPids(directory);
          }
        },
        empty() {
          return pidsOf(directory).length === 0;
        },
        remove() {
          return removeDirectory(directory);
        },
      };
    },
  };
}

/**
 * Where no cgroup can be used: each process of a command gets RLIMIT_DATA = the memory limit
 * (set by the launcher before it becomes bubblewrap, hard and soft, so nothing inside can raise
 * it). Processes are not limited: RLIMIT_NPROC counts every process of the worker's user and
 * binds nobody running as root. The pid namespace still ends every process with its command.
 */
export function rlimitLimiter(): CgroupLimiter {
  return {
    enforcement: 'rlimit',
    create(limits) {
      return {
        procsFiles: [],
        dataLimitKb: limits.memoryMb * 1024,
        killAll: () => undefined,
        empty: () => true,
        remove: () => true,
      };
    },
  };
}

/** Why `findCgroupLimiter` found none (after it returned `undefined`). */
export function cgroupProblem(): string {
  return lastProblem;
}

/**
 * The limiter of this machine, or `undefined` when no cgroup hierarchy with the memory and pids
 * controllers is writable by this process (then `rlimitLimiter` is what is left). On a v2 host
 * this moves the worker into a leaf cgroup of its own first (`delegateCgroupV2`).
 */
export function findCgroupLimiter(): CgroupLimiter | undefined {
  const unified = existsSync(path.join(CGROUP_ROOT, 'cgroup.controllers'));
  const limiter = unified ? v2Limiter() : v1Limiter();
  if (limiter === undefined) return undefined;
  try {
    limiter.create({ memoryMb: 64, processes: 8 }).remove();
  } catch (error) {
    lastProblem = `a command cgroup could not be created (${errorCode(error)})`;
    return undefined;
  }
  return limiter;
}
