import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_SANDBOX_POLICY } from '@baton/workspace';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpSession, mergeMcpConfigs, parseMcpConfig, startMcpServers } from '../src/index.js';

/**
 * Remote (HTTP) MCP servers are reached only through the sandbox's filtering proxy: a server at
 * an allowed host and port works (its tools reach the session, its `${VAR}` header arrives); any
 * other host, a port not allowed, an IP literal in any spelling, and an allowed name that
 * resolves to loopback are refused in one line, and a canary server on the worker's loopback
 * never sees a request.
 */

const PRIVATE_V4 = [
  /^10\./,
  /^127\./,
  /^169\.254\./,
  /^192\.168\./,
  /^172\.(1[6-9]|2\d|3[01])\./,
  /^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./,
];

/** A local address the proxy counts as public, standing in for a remote host. */
function publicLocalAddress(): { address: string; added: boolean } {
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family === 'IPv4' && !PRIVATE_V4.some((range) => range.test(entry.address))) {
        return { address: entry.address, added: false };
      }
    }
  }
  // Only private addresses here: give loopback a documentation address (TEST-NET-2) for the test.
  try {
    execFileSync('ip', ['addr', 'add', '198.51.100.77/32', 'dev', 'lo']);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new Error(
      'no `ip` on PATH: install it with `apt-get install -y iproute2` (or run `bash scripts/test-prerequisites.sh`)',
      { cause: error },
    );
  }
  return { address: '198.51.100.77', added: true };
}

let workspace: string;
let remote: http.Server;
let canary: http.Server;
let remotePort: number;
let canaryPort: number;
let local: { address: string; added: boolean };
let canaryRequests = 0;
const authorizations: string[] = [];

beforeAll(async () => {
  workspace = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'baton-mcp-remote-')));
  local = publicLocalAddress();
  remote = http.createServer((request, response) => {
    authorizations.push(request.headers.authorization ?? '');
    const server = new McpServer({ name: 'remote', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Says where it runs.' }, () => ({
      content: [{ type: 'text', text: 'remote server ok' }],
    }));
    const transport = new StreamableHTTPServerTransport({});
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(request, response));
  });
  await new Promise<void>((resolve) => remote.listen(0, local.address, resolve));
  remotePort = (remote.address() as AddressInfo).port;
  canary = http.createServer((_request, response) => {
    canaryRequests += 1;
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  canaryPort = (canary.address() as AddressInfo).port;
});

afterAll(async () => {
  // Guarded: a beforeAll that failed early (a missing prerequisite) started neither server.
  if (remote !== undefined) await new Promise((resolve) => remote.close(resolve));
  if (canary !== undefined) await new Promise((resolve) => canary.close(resolve));
  if (local?.added === true) execFileSync('ip', ['addr', 'del', '198.51.100.77/32', 'dev', 'lo']);
  rmSync(workspace, { recursive: true, force: true });
});

describe('remote MCP servers only at allowed hosts, through the filtering proxy', () => {
  let session: McpSession;

  afterAll(async () => {
    await session?.dispose();
  });

  it('an allowed host works; every other host and every loopback spelling is refused in one line', async () => {
    const servers: Record<string, string> = {
      allowed: `http://mcp.allowed.test:${remotePort}/mcp`,
      other: `http://mcp.other.test:${remotePort}/mcp`,
      port: `http://mcp.allowed.test:9/mcp`,
      ip: `http://127.0.0.1:${canaryPort}/mcp`,
      decimal: `http://2130706433:${canaryPort}/mcp`,
      hex: `http://0x7f.1:${canaryPort}/mcp`,
      short: `http://127.1:${canaryPort}/mcp`,
      v6: `http://[::1]:${canaryPort}/mcp`,
      mapped: `http://[::ffff:127.0.0.1]:${canaryPort}/mcp`,
      localhost: `http://localhost:${canaryPort}/mcp`,
      rebind: `http://mcp.rebind.test:${canaryPort}/mcp`,
      public: `http://${local.address}:${remotePort}/mcp`,
    };
    const config = parseMcpConfig({
      mcpServers: Object.fromEntries(
        Object.entries(servers).map(([name, url]) => [
          name,
          { type: 'http', url, headers: { Authorization: 'Bearer ${REMOTE_MCP_TOKEN}' } },
        ]),
      ),
    });
    session = await startMcpServers({
      servers: mergeMcpConfigs([{ source: 'project', config }]),
      environment: { REMOTE_MCP_TOKEN: 'remote-token' },
      root: workspace,
      sandbox: {
        mode: 'bubblewrap',
        policy: {
          ...DEFAULT_SANDBOX_POLICY,
          network: {
            // `localhost` and the rebinding name are allowed by name: their addresses refuse them.
            allowedHosts: ['mcp.allowed.test', 'localhost', 'mcp.rebind.test'],
            allowedPorts: [remotePort, canaryPort, 443],
          },
        },
      },
      resolveHost: async (host) =>
        host === 'mcp.allowed.test'
          ? [local.address]
          : host === 'mcp.rebind.test'
            ? ['127.0.0.1']
            : (await lookup(host, { all: true })).map((entry) => entry.address),
      startTimeoutMs: 20_000,
    });
    const states = Object.fromEntries(
      session.statuses.map((status) => [status.server, [status.state, status.message ?? '']]),
    );
    expect(states.allowed).toEqual(['ready', '']);
    expect(session.tools.map((tool) => tool.name)).toEqual(['mcp__allowed__whoami']);
    const answer = await session.tools[0]!.execute({});
    expect(JSON.stringify(answer)).toContain('remote server ok');
    expect(authorizations).toContain('Bearer remote-token');

    const expected: Record<string, RegExp> = {
      other:
        /^MCP server other is unavailable: mcp\.other\.test is not allowed by the project's network policy: host not in the allow-list \(--allow-host\)$/,
      port: /^MCP server port is unavailable: mcp\.allowed\.test is not allowed .*: port not allowed/,
      ip: /: 127\.0\.0\.1 is not allowed .*: IP addresses are not allowed/,
      decimal: /: 127\.0\.0\.1 is not allowed .*: IP addresses are not allowed/,
      hex: /: 127\.0\.0\.1 is not allowed .*: IP addresses are not allowed/,
      short: /: 127\.0\.0\.1 is not allowed .*: IP addresses are not allowed/,
      v6: /: ::1 is not allowed .*: IP addresses are not allowed/,
      mapped: /: ::ffff:7f00:1 is not allowed .*: IP addresses are not allowed/,
      localhost: /: localhost is not allowed .*: name resolves to a loopback or private address/,
      rebind:
        /: mcp\.rebind\.test is not allowed .*: name resolves to a loopback or private address/,
      public: /IP addresses are not allowed/,
    };
    for (const [name, pattern] of Object.entries(expected)) {
      const [state, message] = states[name] ?? [];
      expect(state, name).toBe('failed');
      expect(message, name).toMatch(pattern);
      expect(message, name).not.toContain('\n');
      expect(message, name).not.toContain('remote-token');
    }
    // The notes the model gets say the same, one line each.
    expect(session.notes).toHaveLength(Object.keys(expected).length);
    expect(canaryRequests).toBe(0);
    // The allowed server's request count proves the others never reached it either.
    expect(authorizations.every((value) => value === 'Bearer remote-token')).toBe(true);
  }, 60_000);
});
