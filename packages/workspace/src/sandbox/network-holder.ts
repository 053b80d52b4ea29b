import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { SANDBOX_PROXY_PORT, SANDBOX_PROXY_SOCKET, systemMounts } from './bubblewrap.js';

/** How long a holder may take to report its namespaces. */
const HOLDER_START_MS = 10_000;

/**
 * One session's network namespace, kept open by a small bubblewrap process ("the holder") for as
 * long as the session's sandbox is open. Every command and long-running process of the session
 * joins it (`nsenter --user --net` into the holder, then its own bubblewrap with `--share-net`),
 * so they share one loopback: a server the agent starts from bash is reachable by the session's
 * MCP servers at 127.0.0.1, and nothing on the host's loopback is reachable from either. With the
 * filtering proxy, the holder runs the one `socat` that forwards the sandbox's proxy port.
 */
export interface NetworkHolder {
  /** The program and arguments that run the rest of an argv inside the holder's namespaces. */
  readonly join: readonly string[];
  /** Ends the holder (and its namespace); resolves once it is gone. Idempotent. */
  close(): Promise<void>;
}

/** The holder's program: forward the proxy port when there is a proxy, then wait on stdin. */
function holderScript(withProxy: boolean): string {
  if (!withProxy) return 'echo ready; exec cat >/dev/null';
  const port = SANDBOX_PROXY_PORT.toString(16).toUpperCase().padStart(4, '0');
  return [
    `socat TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_PROXY_SOCKET} </dev/null >/dev/null 2>&1 &`,
    `i=0; while ! grep -q ':${port} 00000000:0000 0A' /proc/net/tcp 2>/dev/null; do i=$((i+1)); [ "$i" -gt 5000 ] && exit 1; done`,
    'echo ready',
    'exec cat >/dev/null',
  ].join('\n');
}

function collect(stream: Readable | null | undefined): () => string {
  let text = '';
  stream?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  return () => text;
}

/**
 * Starts the holder of one session's network namespace: `bwrap --unshare-user --unshare-net
 * --unshare-pid` (bubblewrap brings `lo` up in it) with the system read-only and nothing else,
 * its pid read from `--info-fd`. Rejects with a short reason when it cannot start.
 */
export async function startNetworkHolder(options: {
  bwrap: string;
  nsenter: string;
  /** The filtering proxy's socket on the host, when the session allows hosts. */
  proxySocket?: string | undefined;
}): Promise<NetworkHolder> {
  const args = [
    '--unshare-user',
    '--unshare-net',
    '--unshare-pid',
    '--die-with-parent',
    '--new-session',
    '--info-fd',
    '3',
    ...systemMounts(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
  ];
  if (options.proxySocket !== undefined) {
    args.push('--bind', options.proxySocket, SANDBOX_PROXY_SOCKET);
  }
  args.push('--', '/bin/sh', '-c', holderScript(options.proxySocket !== undefined));
  const child: ChildProcess = spawn(options.bwrap, args, {
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  child.on('error', () => undefined);
  child.stdin?.on('error', () => undefined);
  const info = collect(child.stdio[3] as Readable | null);
  const out = collect(child.stdout);
  const err = collect(child.stderr);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const close = async () => {
    child.stdin?.destroy();
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Gone.
    }
    await closed;
  };
  const pid = await new Promise<number>((resolve, reject) => {
    // Never started in time: ended, which rejects below.
    const timer = setTimeout(() => void close(), HOLDER_START_MS);
    const look = () => {
      const match = /"child-pid"\s*:\s*(\d+)/.exec(info());
      if (match === null || !out().includes('ready')) return;
      clearTimeout(timer);
      resolve(Number(match[1]));
    };
    child.stdout?.on('data', look);
    (child.stdio[3] as Readable | null)?.on('data', look);
    void closed.then(() => {
      clearTimeout(timer);
      reject(new Error(err().trim().split('\n')[0] || 'the network namespace could not be made'));
    });
  });
  return {
    join: [
      options.nsenter,
      '--target',
      String(pid),
      '--user',
      '--net',
      '--preserve-credentials',
      '--',
    ],
    close,
  };
}
