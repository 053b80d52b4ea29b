import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';

/** Options of `startTcpProxy`. */
export interface TcpProxyOptions {
  /** Where connections are forwarded (a port on 127.0.0.1). */
  targetPort: number;
  /** Host of the target. Default `127.0.0.1`. */
  targetHost?: string;
}

/**
 * A TCP proxy on 127.0.0.1 between a client (a worker) and a server (Redis), whose link a test can
 * break the two ways networks break:
 * - `stall()`: a partition. Nothing flows either way and nothing is closed; bytes sent meanwhile
 *   wait, as TCP retransmissions do, and all arrive after `restore()`: a write buffered during
 *   the partition lands late.
 * - `cut()`: every connection is reset and new ones are refused until `restore()` (a cable pulled
 *   with a firewall rejecting, or a restarted load balancer).
 */
export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** `redis://127.0.0.1:<port>` (for Redis targets). */
  readonly url: string;
  /** Connections currently open through the proxy. */
  readonly connections: number;
  stall(): void;
  cut(): void;
  /** Ends a stall (delivering what waited) or a cut (accepting connections again). */
  restore(): void;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  server: Socket;
  /** Bytes held during a stall, per direction, in order. */
  toServer: Buffer[];
  toClient: Buffer[];
}

/** Starts a proxy to `targetPort`; see `TcpProxy`. */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const host = options.targetHost ?? '127.0.0.1';
  const links = new Set<Link>();
  let mode: 'open' | 'stalled' | 'cut' = 'open';

  const forward = (link: Link, from: Socket, to: Socket, held: Buffer[]) => {
    from.on('data', (chunk: Buffer) => {
      if (mode === 'stalled') held.push(chunk);
      else if (!to.destroyed) to.write(chunk);
    });
  };
  const drop = (link: Link) => {
    links.delete(link);
    link.client.destroy();
    link.server.destroy();
  };

  const server: Server = createServer((client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ port: options.targetPort, host });
    const link: Link = { client, server: upstream, toServer: [], toClient: [] };
    links.add(link);
    forward(link, client, upstream, link.toServer);
    forward(link, upstream, client, link.toClient);
    for (const socket of [client, upstream]) {
      socket.on('error', () => drop(link));
      socket.on('close', () => drop(link));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  const port = address.port;

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get connections() {
      return links.size;
    },
    stall() {
      mode = 'stalled';
    },
    cut() {
      mode = 'cut';
      for (const link of [...links]) {
        link.client.resetAndDestroy();
        drop(link);
      }
    },
    restore() {
      mode = 'open';
      for (const link of links) {
        for (const chunk of link.toServer.splice(0)) link.server.write(chunk);
        for (const chunk of link.toClient.splice(0)) link.client.write(chunk);
      }
    },
    async close() {
      for (const link of [...links]) drop(link);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
