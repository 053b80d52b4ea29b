import { lookup } from 'node:dns/promises';
import { chmodSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { BlockList } from 'node:net';

/** Destinations never reached through the proxy, whatever name resolves to them. */
const PRIVATE = new BlockList();
PRIVATE.addSubnet('0.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4');
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('169.254.0.0', 16, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addSubnet('224.0.0.0', 3, 'ipv4');
PRIVATE.addAddress('::', 'ipv6');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');
PRIVATE.addSubnet('fe80::', 10, 'ipv6');
PRIVATE.addSubnet('ff00::', 8, 'ipv6');

/** True when `host` matches one allow-list entry (`name`, or `*.domain` for its subdomains). */
export function hostAllowed(host: string, allowedHosts: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allowedHosts.some((entry) =>
    entry.startsWith('*.') ? name.endsWith(entry.slice(1)) : name === entry,
  );
}

function isPrivate(address: string): boolean {
  if (net.isIPv4(address)) return PRIVATE.check(address, 'ipv4');
  const mapped = address.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i)?.[1];
  if (mapped !== undefined) return PRIVATE.check(mapped, 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

/** What the proxy decided about one connection, for tests and logs. */
export interface ProxyDecision {
  host: string;
  port: number;
  allowed: boolean;
  reason?: string;
}

/** Options of `startFilteringProxy`. */
export interface FilteringProxyOptions {
  /** Unix socket path to listen on (bind-mounted into the sandbox). */
  socketPath: string;
  /** Host names reachable (see `hostAllowed`). */
  allowedHosts: readonly string[];
  /** Ports reachable on them. */
  allowedPorts: readonly number[];
  /** Called for every decision. Default: none. */
  onDecision?: (decision: ProxyDecision) => void;
  /** Resolves a name to addresses. Default: the host's resolver. */
  resolve?: ((host: string) => Promise<string[]>) | undefined;
}

/** A running filtering proxy. */
export interface FilteringProxy {
  socketPath: string;
  close(): Promise<void>;
}

const defaultResolve = async (host: string): Promise<string[]> =>
  (await lookup(host, { all: true })).map((entry) => entry.address);

/**
 * An HTTP proxy on a Unix socket that lets sandboxed commands reach allowed hosts only: `CONNECT
 * host:port` (HTTPS, git, npm) and absolute-URL requests (plain HTTP). Names are resolved here,
 * on the host; a name that is not allowed, a port that is not allowed, an IP literal, or a name
 * resolving to a loopback, private or link-local address is refused with 403.
 */
export async function startFilteringProxy(options: FilteringProxyOptions): Promise<FilteringProxy> {
  const resolve = options.resolve ?? defaultResolve;
  const sockets = new Set<net.Socket>();

  async function decide(host: string, port: number): Promise<string | ProxyDecision> {
    const refuse = (reason: string): ProxyDecision => ({ host, port, allowed: false, reason });
    if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0) return refuse('IP addresses are not allowed');
    if (!hostAllowed(host, options.allowedHosts)) return refuse('host not in the allow-list');
    if (!options.allowedPorts.includes(port)) return refuse('port not allowed');
    let addresses: string[];
    try {
      addresses = await resolve(host);
    } catch {
      return refuse('name does not resolve');
    }
    const address = addresses.find((candidate) => !isPrivate(candidate));
    if (address === undefined || addresses.some(isPrivate)) {
      return refuse('name resolves to a loopback or private address');
    }
    return address;
  }

  function report(host: string, port: number, verdict: string | ProxyDecision): void {
    options.onDecision?.(typeof verdict === 'string' ? { host, port, allowed: true } : verdict);
  }

  const server = http.createServer((request, response) => {
    let target: URL;
    try {
      target = new URL(request.url ?? '');
    } catch {
      response.writeHead(400).end('Baton sandbox proxy: absolute URL expected\n');
      return;
    }
    const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
    void decide(target.hostname, port).then((verdict) => {
      report(target.hostname, port, verdict);
      if (typeof verdict !== 'string' || target.protocol !== 'http:') {
        response
          .writeHead(403)
          .end(
            `Baton sandbox proxy: ${typeof verdict === 'string' ? 'only http:// here' : verdict.reason}: ${target.hostname}\n`,
          );
        return;
      }
      const upstream = http.request(
        {
          host: verdict,
          port,
          method: request.method,
          path: `${target.pathname}${target.search}`,
          headers: { ...request.headers, host: target.host },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on('error', () => response.writeHead(502).end());
      request.pipe(upstream);
    });
  });

  server.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const match = (request.url ?? '').match(/^\[?([^\]]+?)\]?:(\d+)$/);
    const host = match?.[1] ?? '';
    const port = Number(match?.[2] ?? 0);
    void decide(host, port).then((verdict) => {
      report(host, port, verdict);
      if (typeof verdict !== 'string') {
        client.end(`HTTP/1.1 403 Forbidden\r\n\r\nBaton sandbox proxy: ${verdict.reason}\r\n`);
        return;
      }
      const upstream = net.connect({ host: verdict, port }, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    });
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => resolveListen());
  });
  // Only the sandbox (root inside its namespace, mapped to this user) connects.
  chmodSync(options.socketPath, 0o600);
  return {
    socketPath: options.socketPath,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    },
  };
}
