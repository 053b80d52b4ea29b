import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { SandboxPolicy } from './policy.js';

/** Where the filtering proxy's socket appears inside the sandbox. */
export const SANDBOX_PROXY_SOCKET = '/run/baton/proxy.sock';
/** The loopback port inside the sandbox that forwards to the proxy socket. */
export const SANDBOX_PROXY_PORT = 3128;
/** Where Baton's git directory of the workspace appears inside the sandbox, read-only. */
export const SANDBOX_GIT_DIR = '/run/baton/git';
/** Where a checkpoint's hooks see the repository's hooks directory, read-only. */
export const SANDBOX_HOOKS_DIR = '/run/baton/hooks';
/** Where hooks see Baton's object database, read-only, behind their scratch git directory. */
export const SANDBOX_GIT_OBJECTS = '/run/baton/objects';
/** PATH inside the sandbox: the system's directories only (the host's PATH names host homes). */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Top-level system directories mounted read-only (or recreated as the symlinks they are). */
const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The host layout of one session's sandbox. */
export interface SandboxLayout {
  /** Realpath of the workspace: mounted read-write at the same path, the commands' directory. */
  workspace: string;
  /** The session's private temporary directory on the host: mounted read-write as `/tmp`. */
  tmp: string;
  /** The filtering proxy's Unix socket on the host, when the policy allows hosts. */
  proxySocket?: string | undefined;
  /** The host directory bound read-only as `/etc`: a copy of its allowed entries (`etcSnapshot`). */
  etc: string;
  /** Baton's git directory of the workspace, for read-only git inside (`SANDBOX_GIT_DIR`). */
  git?: SandboxGit | undefined;
  /** The repository's hooks directory (a checkpoint's hooks only): read-only at `SANDBOX_HOOKS_DIR`. */
  hooks?: string | undefined;
  /**
   * Set when the command runs inside the session's network namespace (`network-holder.ts`):
   * bubblewrap then keeps that namespace (`--share-net`) instead of making its own.
   */
  sharedNetwork?: boolean | undefined;
}

/** What read-only git inside the sandbox is made of, all on the host. */
export interface SandboxGit {
  /** Baton's git directory: bound read-only at `SANDBOX_GIT_DIR`. */
  directory: string;
  /** Its configuration without host paths (remote, hooks path): bound over its `config`. */
  config: string;
  /** A file reading `gitdir: SANDBOX_GIT_DIR`: bound over the workspace's `.git`. */
  dotGit: string;
  /**
   * Set for a checkpoint's hooks: `directory` is then a scratch copy of Baton's refs and index
   * (bound read-write, discarded after the hooks) whose objects are Baton's, bound read-only
   * at `SANDBOX_GIT_OBJECTS` and reached through its `objects/info/alternates`.
   */
  scratchObjects?: string;
}

let cachedSystemMounts: string[] | undefined;

/** The system directories, read-only, as bubblewrap arguments (cached: they do not change). */
export function systemMounts(): string[] {
  cachedSystemMounts ??= readSystemMounts();
  return cachedSystemMounts;
}

function readSystemMounts(): string[] {
  const args: string[] = [];
  for (const directory of SYSTEM_DIRECTORIES) {
    let stat;
    try {
      stat = lstatSync(directory);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(directory), directory);
    else if (stat.isDirectory()) args.push('--ro-bind', directory, directory);
  }
  return args;
}

/**
 * The `bwrap` arguments of one command, up to and including `--`. Every namespace is unshared
 * (user, pid, network, ipc, uts, cgroup), the root is a fresh tmpfs holding only the system
 * directories and the `/etc` snapshot (read-only), `/dev` (bubblewrap's minimal one), an own `/proc`, the private tmp and
 * the workspace; the environment is exactly `env`; all capabilities are dropped.
 */
export function bubblewrapArguments(
  layout: SandboxLayout,
  policy: SandboxPolicy,
  env: Readonly<Record<string, string>>,
): string[] {
  const args = [
    '--unshare-all',
    // Joined to the session's network namespace (`network-holder.ts`): its one loopback.
    ...(layout.sharedNetwork === true ? ['--share-net'] : []),
    // As root `--unshare-all` may skip the user namespace; force it, and forbid nested ones so
    // a command cannot gain a fresh set of capabilities inside.
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'sandbox',
    '--cap-drop',
    'ALL',
    '--clearenv',
    ...systemMounts(),
    '--ro-bind',
    layout.etc,
    '/etc',
  ];
  args.push('--dev', '/dev', '--proc', '/proc', '--bind', layout.tmp, '/tmp');
  // After /tmp, so that a read-only path under the host's /tmp is not hidden by the private one.
  for (const extra of policy.filesystem.readOnlyPaths) {
    if (existsSync(extra)) args.push('--ro-bind', extra, extra);
  }
  args.push('--bind', layout.workspace, layout.workspace, '--chdir', layout.workspace);
  if (layout.git !== undefined) {
    // Git finds the repository through the workspace's `.git` file as it always does, at a path
    // that says nothing about the host; the agent's own repositories elsewhere stay its own.
    args.push('--ro-bind', layout.git.dotGit, path.posix.join(layout.workspace, '.git'));
    if (layout.git.scratchObjects === undefined) {
      args.push('--ro-bind', layout.git.directory, SANDBOX_GIT_DIR);
    } else {
      args.push('--bind', layout.git.directory, SANDBOX_GIT_DIR);
      args.push('--ro-bind', layout.git.scratchObjects, SANDBOX_GIT_OBJECTS);
    }
    args.push('--ro-bind', layout.git.config, path.posix.join(SANDBOX_GIT_DIR, 'config'));
  }
  if (layout.hooks !== undefined) args.push('--ro-bind', layout.hooks, SANDBOX_HOOKS_DIR);
  if (layout.proxySocket !== undefined) {
    args.push('--dir', path.posix.dirname(SANDBOX_PROXY_SOCKET));
    args.push('--bind', layout.proxySocket, SANDBOX_PROXY_SOCKET);
  }
  for (const [key, value] of Object.entries(env)) args.push('--setenv', key, value);
  args.push('--');
  return args;
}

/**
 * The program bubblewrap runs: `bash -c <command>`, or, with the proxy, a shell that first starts
 * `socat` forwarding the sandbox's loopback port to the proxy socket and waits until it listens.
 */
export function sandboxedCommand(command: string, withProxy: boolean): string[] {
  if (!withProxy) return ['/bin/bash', '-c', command];
  const port = SANDBOX_PROXY_PORT.toString(16).toUpperCase().padStart(4, '0');
  const script = [
    `socat TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_PROXY_SOCKET} </dev/null >/dev/null 2>&1 &`,
    // The listener is up once its socket is in LISTEN state (0A) in the namespace's table.
    `i=0; while ! grep -q ':${port} 00000000:0000 0A' /proc/net/tcp 2>/dev/null; do i=$((i+1)); [ "$i" -gt 5000 ] && break; done`,
    'exec /bin/bash -c "$0"',
  ].join('\n');
  return ['/bin/sh', '-c', script, command];
}
