import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** A remote server's host refused by the sandbox's filtering proxy, in one line. */
export class DestinationRefusedError extends Error {
  constructor(host: string, reason: string) {
    super(`${host} is not allowed by the project's network policy: ${reason} (--allow-host)`);
    this.name = 'DestinationRefusedError';
  }
}

/** Opens a `CONNECT host:port` tunnel through the proxy's Unix socket. */
function tunnel(socketPath: string, host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path: socketPath });
    let answer = Buffer.alloc(0);
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.once('error', fail);
    socket.on('connect', () => {
      const target = net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    });
    const onData = (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf('\r\n\r\n');
      if (end < 0) {
        if (answer.length > 8_192) fail(new Error('the sandbox proxy answered garbage'));
        return;
      }
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer.toString('latin1'))?.[1];
      if (status !== '200') {
        socket.off('data', onData);
        // The proxy says why in one line after the head (`Baton sandbox proxy: <reason>`).
        const collect = () => {
          const text = answer.subarray(end + 4).toString('utf8');
          const reason =
            /Baton sandbox proxy: ([^\r\n]+)/.exec(text)?.[1] ?? `HTTP ${status ?? '?'}`;
          fail(new DestinationRefusedError(host, reason));
        };
        socket.on('data', (more: Buffer) => (answer = Buffer.concat([answer, more])));
        socket.once('end', collect);
        socket.once('close', collect);
        return;
      }
      socket.off('data', onData);
      socket.off('error', fail);
      const rest = answer.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    socket.on('data', onData);
  });
}

/**
 * A `fetch` for the MCP SDK's HTTP transport that reaches remote servers only through the
 * sandbox's filtering proxy (`startFilteringProxy` on `socketPath`): the same allow-list, ports,
 * IP-literal and loopback/private-address refusals as commands in the sandbox get, decided
 * once and connected to the address the proxy resolved. A refusal is a
 * `DestinationRefusedError`. Redirects are returned, not followed.
 */
export function fetchThroughProxy(socketPath: string): FetchLike {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    const secure = url.protocol === 'https:';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || (secure ? 443 : 80));
    const socket = await tunnel(socketPath, host, port);
    const headers = new Headers(init.headers);
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    if (body !== undefined) headers.set('content-length', String(Buffer.byteLength(body)));
    // TLS runs end to end over the tunnel, with the server's name for SNI and the certificate.
    const connection = secure
      ? tls.connect({
          socket,
          servername: net.isIP(host) === 0 ? host : '',
          ALPNProtocols: ['http/1.1'],
        })
      : socket;
    return new Promise<Response>((resolve, reject) => {
      const request = http.request(
        {
          method: init.method ?? 'GET',
          host,
          port,
          path: `${url.pathname}${url.search}`,
          headers: Object.fromEntries(headers.entries()),
          createConnection: () => connection,
        },
        onResponse,
      );
      function onResponse(response: http.IncomingMessage) {
        const responseHeaders = new Headers();
        for (const [key, value] of Object.entries(response.headers)) {
          if (Array.isArray(value)) for (const one of value) responseHeaders.append(key, one);
          else if (value !== undefined) responseHeaders.set(key, value);
        }
        const status = response.statusCode ?? 502;
        const hasBody = status !== 204 && status !== 304 && (init.method ?? 'GET') !== 'HEAD';
        resolve(
          new Response(hasBody ? (Readable.toWeb(response) as ReadableStream<Uint8Array>) : null, {
            status,
            statusText: response.statusMessage ?? '',
            headers: responseHeaders,
          }),
        );
      }
      request.on('error', reject);
      const signal = init.signal;
      if (signal !== undefined && signal !== null) {
        if (signal.aborted) request.destroy(new Error('aborted'));
        signal.addEventListener('abort', () => request.destroy(new Error('aborted')), {
          once: true,
        });
      }
      request.end(body);
    });
  };
}
