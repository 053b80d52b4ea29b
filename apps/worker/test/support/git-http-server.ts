import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A git smart-HTTP server over `git http-backend` that wants HTTP Basic credentials. */
export interface GitHttpServer {
  /** Base URL; a repository `name.git` under the root is `${url}/name.git`. */
  url: string;
  /** Requests answered, with whether they carried the right credentials. */
  requests: Array<{ method: string; path: string; authorized: boolean }>;
  close(): Promise<void>;
}

/**
 * Serves the bare repositories under `root` (fetch and push) to clients that send
 * `username:password`; anything else gets 401 with a Basic challenge, as a hosted forge does.
 */
export async function startGitHttpServer(options: {
  root: string;
  username: string;
  password: string;
}): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  const requests: GitHttpServer['requests'] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://git.local');
    const authorized = request.headers.authorization === expected;
    requests.push({ method: request.method ?? 'GET', path: url.pathname, authorized });
    if (!authorized) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('no access\n');
      return;
    }
    backend(request, response, url, options.root, options.username);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs `git http-backend` as a CGI program for one request. */
function backend(
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  root: string,
  user: string,
): void {
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REMOTE_USER: user,
      REQUEST_METHOD: request.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: request.headers['content-type'] ?? '',
      // eslint-disable-next-line no-restricted-syntax -- env maps never get undefined values
      ...(request.headers['content-encoding'] === undefined
        ? {}
        : { HTTP_CONTENT_ENCODING: String(request.headers['content-encoding']) }),
      // eslint-disable-next-line no-restricted-syntax -- env maps never get undefined values
      ...(request.headers['git-protocol'] === undefined
        ? {}
        : { GIT_PROTOCOL: String(request.headers['git-protocol']) }),
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  request.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersSent = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersSent) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) return;
    let status = 200;
    for (const line of head.subarray(0, end).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else response.setHeader(name, value);
    }
    response.writeHead(status);
    headersSent = true;
    response.write(head.subarray(end + 4));
  });
  child.on('close', () => {
    if (!headersSent) response.writeHead(502);
    response.end();
  });
}
