import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** How memory and process limits are enforced: a cgroup per command (v1 or v2 hierarchy). */
export type LimitsEnforcement = 'cgroup-v1' | 'cgroup-v2';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** One command's cgroup(s): processes join them before bubblewrap starts. */
export interface CommandCgroup {
  /** `cgroup.procs` files the command's first process writes its pid into. */
  procsFiles: string[];
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

function v2Limiter(): CgroupLimiter | undefined {
  const parent = ownCgroup('');
  if (parent === undefined) return undefined;
  const base = path.join(CGROUP_ROOT, parent);
  let enabled: string;
  try {
    enabled = readFileSync(path.join(base, 'cgroup.subtree_control'), 'utf8');
  } catch {
    return undefined;
  }
  if (!/\bmemory\b/.test(enabled) || !/\bpids\b/.test(enabled)) {
    try {
      writeFileSync(path.join(base, 'cgroup.subtree_control'), '+memory +pids');
    } catch {
      // A cgroup with processes of its own cannot delegate controllers (no internal processes).
      return undefined;
    }
  }
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
 * The limiter of this machine, or `undefined` when no cgroup hierarchy with the memory and pids
 * controllers is writable by this process (then limits cannot be enforced: rlimits do not bound
 * the processes of root, and bound memory only per process).
 */
export function findCgroupLimiter(): CgroupLimiter | undefined {
  const unified = existsSync(path.join(CGROUP_ROOT, 'cgroup.controllers'));
  const limiter = unified ? v2Limiter() : v1Limiter();
  if (limiter === undefined) return undefined;
  try {
    limiter.create({ memoryMb: 64, processes: 8 }).remove();
  } catch {
    return undefined;
  }
  return limiter;
}
