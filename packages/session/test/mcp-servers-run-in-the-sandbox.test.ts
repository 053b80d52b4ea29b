import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DEFAULT_SANDBOX_POLICY } from '@baton/workspace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type McpServerEntry,
  type McpServerStatus,
  type McpSession,
  parseMcpConfig,
  mergeMcpConfigs,
  startMcpServers,
} from '../src/index.js';

/**
 * Real MCP servers from the npm registry, started the way a `.mcp.json` written for Claude Code
 * starts them (`npx -y <package>`), inside the session's bubblewrap sandbox: the reference
 * `server-everything` (tools, errors, images) and `server-filesystem` (confined to the
 * workspace; a canary outside it is refused by the server and unreachable anyway), and servers
 * that fail in every way a server can: bad command, hangs at start, prints garbage, exits
 * mid-session. Each failure is one line and the others go on.
 */

let base: string;
let workspace: string;
let canary: string;
const SECRET = `canary-${randomBytes(6).toString('hex')}`;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'baton-mcp-')));
  workspace = path.join(base, 'workspace');
  mkdirSync(workspace);
  writeFileSync(path.join(workspace, 'notes.txt'), 'inside the workspace\n');
  canary = path.join(base, 'canary.txt');
  writeFileSync(canary, SECRET);
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

function entries(config: unknown): McpServerEntry[] {
  return mergeMcpConfigs([{ source: 'project', config: parseMcpConfig(config) }]);
}

async function call(session: McpSession, name: string, input: unknown) {
  const tool = session.tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}: ${session.tools.map((t) => t.name)}`);
  return tool.execute(input);
}

describe('real MCP servers in the sandbox', () => {
  let session: McpSession;
  const seen: McpServerStatus[] = [];

  beforeAll(async () => {
    session = await startMcpServers({
      servers: entries({
        mcpServers: {
          everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] },
          files: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem@latest', workspace],
          },
        },
      }),
      environment: {},
      root: workspace,
      sandbox: { mode: 'bubblewrap', policy: DEFAULT_SANDBOX_POLICY },
      startTimeoutMs: 60_000,
      onStatus: (status) => {
        seen.push(status);
      },
    });
  }, 120_000);

  afterAll(async () => {
    await session?.dispose();
  });

  it('lists both servers ready, their tools named mcp__<server>__<tool>, sorted', () => {
    expect(session.notes).toEqual([]);
    expect(session.statuses.map((status) => [status.server, status.state])).toEqual([
      ['everything', 'ready'],
      ['files', 'ready'],
    ]);
    const names = session.tools.map((tool) => tool.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('mcp__everything__echo');
    expect(names).toContain('mcp__files__read_text_file');
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const echo = session.tools.find((tool) => tool.name === 'mcp__everything__echo');
    expect(echo?.definition).toMatchObject({
      name: 'mcp__everything__echo',
      input_schema: { type: 'object', properties: { message: expect.anything() } },
    });
    expect(seen.filter((status) => status.state === 'ready')).toHaveLength(2);
  });

  it('calls a tool and returns its text', async () => {
    const outcome = await call(session, 'mcp__everything__echo', { message: 'hello sandbox' });
    expect(outcome).toMatchObject({ isError: false });
    expect(outcome.content).toContain('hello sandbox');
  });

  it('returns an image as an image block', async () => {
    const tool = session.tools.find((candidate) => /image/i.test(candidate.name));
    expect(tool).toBeDefined();
    const outcome = await tool!.execute({});
    expect(outcome.isError).toBe(false);
    expect(outcome.images?.[0]).toMatchObject({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png' },
    });
    expect(outcome.images?.[0]?.source).toHaveProperty('data', expect.stringMatching(/^iVBOR/));
  });

  it('reports a tool error as an error result, and bad input as an error', async () => {
    const bad = await call(session, 'mcp__everything__echo', { wrong: 1 });
    expect(bad.isError).toBe(true);
    expect(bad.content).not.toMatch(/node_modules|\/work\//);
  });

  it('filesystem: reads the workspace, refuses a path outside it, and the canary stays unread', async () => {
    const inside = await call(session, 'mcp__files__read_text_file', {
      path: path.join(workspace, 'notes.txt'),
    });
    expect(inside.content).toContain('inside the workspace');
    const outside = await call(session, 'mcp__files__read_text_file', { path: canary });
    expect(outside.isError).toBe(true);
    expect(outside.content).not.toContain(SECRET);
    // Through a link planted in the workspace: the server refuses, and the sandbox has no such file.
    const { symlinkSync } = await import('node:fs');
    symlinkSync(canary, path.join(workspace, 'link.txt'));
    const linked = await call(session, 'mcp__files__read_text_file', {
      path: path.join(workspace, 'link.txt'),
    });
    expect(linked.content).not.toContain(SECRET);
    const written = await call(session, 'mcp__files__write_file', {
      path: canary,
      content: 'overwritten',
    });
    expect(written.isError).toBe(true);
    expect(readFileSync(canary, 'utf8')).toBe(SECRET);
  });
});

describe('servers that fail', () => {
  it('reports each failure in one line and keeps the servers that work', async () => {
    const script = (name: string, body: string) => {
      writeFileSync(path.join(workspace, name), body);
      return path.join(workspace, name);
    };
    const hang = script('hang.sh', 'sleep 600\n');
    const garbage = script(
      'garbage.sh',
      'while true; do echo "not json at all"; sleep 0.05; done\n',
    );
    const dies = script(
      'dies.js',
      [
        // A real server that answers initialize and tools/list, then exits on its first call.
        "const rl = require('node:readline').createInterface({ input: process.stdin });",
        "const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');",
        "rl.on('line', (line) => { const m = JSON.parse(line);",
        "  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'dies', version: '1' } } });",
        "  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'boom', inputSchema: { type: 'object' } }] } });",
        "  else if (m.method === 'tools/call') { console.error('dying on purpose'); process.exit(3); } });",
      ].join('\n'),
    );
    const seen: McpServerStatus[] = [];
    const session = await startMcpServers({
      servers: entries({
        mcpServers: {
          missing: { command: 'no-such-program-here' },
          hangs: { command: 'bash', args: [hang] },
          garbage: { command: 'bash', args: [garbage] },
          dies: { command: 'node', args: [dies] },
          secret: { command: 'node', env: { TOKEN: '${BATON_TEST_UNSET_VARIABLE}' } },
          echo: { command: 'npx', args: ['@modelcontextprotocol/server-everything'] },
        },
      }),
      environment: {},
      root: workspace,
      sandbox: { mode: 'bubblewrap', policy: DEFAULT_SANDBOX_POLICY },
      startTimeoutMs: 8_000,
      onStatus: (status) => {
        seen.push(status);
      },
    });
    try {
      const byName = Object.fromEntries(session.statuses.map((s) => [s.server, s]));
      expect(byName.echo?.state).toBe('ready');
      expect(byName.dies?.state).toBe('ready');
      expect(byName.missing).toMatchObject({ state: 'failed' });
      expect(byName.missing?.message).toMatch(/^MCP server missing is unavailable: .*not found/);
      expect(byName.hangs?.message).toBe(
        'MCP server hangs is unavailable: it did not answer within 8 s',
      );
      expect(byName.garbage?.message).toMatch(/line\(s\) that are not MCP messages/);
      expect(byName.secret?.message).toBe(
        "MCP server secret is unavailable: ${BATON_TEST_UNSET_VARIABLE} is not set in the worker's environment",
      );
      expect(session.notes).toHaveLength(4);
      for (const note of session.notes) {
        expect(note.split('\n')).toHaveLength(1);
        expect(note).not.toMatch(/\/work\/|node_modules|baton-sandbox/);
      }
      const outcome = await call(session, 'mcp__dies__boom', {});
      expect(outcome.isError).toBe(true);
      expect(outcome.content).toMatch(/MCP server dies/);
      const again = await call(session, 'mcp__dies__boom', {});
      expect(again.content).toMatch(/exited.*unavailable for the rest of this session/);
      expect(seen.some((status) => status.server === 'dies' && status.state === 'exited')).toBe(
        true,
      );
      const echo = await call(session, 'mcp__echo__echo', { message: 'still here' });
      expect(echo.content).toContain('still here');
    } finally {
      await session.dispose();
    }
  }, 120_000);
});
