// The fresh machine's only way out (scripts/fresh-machine-check.sh): the machine runs in a network
// namespace of its own with nothing but loopback, so a Redis, Postgres or anything else listening
// on this host's loopback is not there, as on a new machine. Its package clients (apt, npm, pnpm)
// reach the registries through an HTTP proxy on its loopback; that proxy is this script twice:
//   node fresh-machine-proxy.mjs serve SOCKET       on the host: an HTTP proxy on a Unix socket
//   node fresh-machine-proxy.mjs bridge PORT SOCKET in the namespace: 127.0.0.1:PORT -> SOCKET
// `serve` forwards plain HTTP requests (absolute-form, as apt sends them) and CONNECT tunnels
// (npm's HTTPS), and refuses IP addresses and localhost so the machine cannot reach this host's
// services through it.
import http from 'node:http';
import net from 'node:net';

const [mode, first, second] = process.argv.slice(2);

/** Names the proxy will not connect to: this host's loopback and private addresses. */
function refused(host) {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost') || net.isIP(name) !== 0;
}

function pipeBoth(a, b) {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.pipe(b).pipe(a);
}

if (mode === 'serve' && first !== undefined) {
  const server = http.createServer((request, response) => {
    let url;
    try {
      url = new URL(request.url ?? '');
    } catch {
      response.writeHead(400).end('absolute URL expected\n');
      return;
    }
    if (url.protocol !== 'http:' || refused(url.hostname)) {
      response.writeHead(403).end('refused\n');
      return;
    }
    const headers = { ...request.headers };
    for (const hop of [
      'connection',
      'keep-alive',
      'proxy-connection',
      'proxy-authorization',
      'te',
      'upgrade',
    ]) {
      delete headers[hop];
    }
    const upstream = http.request(
      {
        host: url.hostname,
        port: url.port === '' ? 80 : Number(url.port),
        method: request.method,
        path: `${url.pathname}${url.search}`,
        headers,
        agent: false,
      },
      (reply) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(upstream);
  });
  server.on('connect', (request, socket, head) => {
    const match = /^(.+):(\d+)$/.exec(request.url ?? '');
    if (match === null || refused(match[1])) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(match[2]), match[1], () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      pipeBoth(socket, upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  server.listen(first);
} else if (mode === 'bridge' && first !== undefined && second !== undefined) {
  net
    .createServer((connection) => pipeBoth(connection, net.connect(second)))
    .listen(Number(first), '127.0.0.1');
} else {
  process.stderr.write('usage: fresh-machine-proxy.mjs serve SOCKET | bridge PORT SOCKET\n');
  process.exit(2);
}
