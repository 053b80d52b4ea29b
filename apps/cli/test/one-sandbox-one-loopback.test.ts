import { readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startModelSim } from '@baton/model-sim';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli } from './helpers.js';

/**
 * One sandbox, one loopback per session, from `baton run` on the simulator over HTTP (the real
 * SDK), real bubblewrap and the Playwright MCP server with the system Chromium: the agent starts
 * its web app from bash (`node app/server.js &`), and the browser server of the same session
 * reaches it at 127.0.0.1. The host's loopback stays out of reach of both: a canary on the host
 * listens on the very port the agent's app uses, and another on a port nothing in the sandbox
 * uses; neither gets a request, and the browser saw the agent's page, not the canary's.
 */

const world = cliWorld();

/** A host HTTP server on 127.0.0.1 that counts what reaches it. */
async function canary(): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = http.createServer((request, response) => {
    hits.push(request.url ?? '');
    response.end('<html><body><h1>HOST CANARY</h1></body></html>');
  });
  world.closeAfter({ close: () => new Promise((done) => server.close(() => done(null))) });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return { port: (server.address() as AddressInfo).port, hits };
}

/** Every transcript file of a project, as one text. */
async function transcriptText(project: string): Promise<string> {
  const files = await readdir(path.join(project, 'transcripts'), { recursive: true });
  const texts = await Promise.all(
    files
      .filter((file) => file.endsWith('.jsonl') || file.endsWith('.json'))
      .map((file) => readFile(path.join(project, 'transcripts', file), 'utf8')),
  );
  return texts.join('\n');
}

/** Host processes whose working directory is under `root` (what the session left running). */
async function processesUnder(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = await readlink(`/proc/${entry}/cwd`);
      if (!cwd.startsWith(root)) continue;
      const command = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).replaceAll('\0', ' ');
      found.push(command.trim());
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

describe('one sandbox, one loopback per session', () => {
  it(
    'the browser reaches the app the agent started from bash; the host loopback stays unreached',
    { timeout: 300_000 },
    async () => {
      const samePort = await canary();
      const otherPort = await canary();
      const sim = world.closeAfter(await startModelSim({ port: 0 }));
      await writeFile(
        path.join(world.dir, 'mcp.json'),
        JSON.stringify({
          mcpServers: { browser: { command: 'npx', args: ['@playwright/mcp@latest'] } },
        }),
      );
      const app = `http://127.0.0.1:${samePort.port}/`;
      const host = `http://127.0.0.1:${otherPort.port}/`;
      await writeFile(
        path.join(world.dir, 'goal.md'),
        [
          'A status page, checked in the browser.',
          `- Serve a status page [sim:web-app ${samePort.port}] [sim:mcp mcp__browser__browser_navigate {"url":"${app}"}] [sim:mcp mcp__browser__browser_snapshot {}] [sim:mcp-expect F1 ok]`,
          `- Look at the host [sim:mcp mcp__browser__browser_navigate {"url":"${host}"}] [sim:mcp-expect HOST CANARY]`,
          '',
        ].join('\n'),
      );
      const result = await runCli(
        [
          'run',
          '--goal-file',
          path.join(world.dir, 'goal.md'),
          '--project',
          'loopback',
          '--sessions',
          '2',
          '--mcp-config',
          path.join(world.dir, 'mcp.json'),
        ],
        {
          cwd: world.dir,
          env: cliEnv(world.home, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: sim.url }),
        },
      );
      expect(result.stdout).toMatch(/MCP server browser \(project, stdio\): ready · \d+ tools/);
      const events = (
        await readFile(path.join(world.home, 'projects', 'loopback', 'events.jsonl'), 'utf8')
      )
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const calls = events.filter((event) => event.type === 'tool-call') as Array<{
        tool: string;
        summary?: string;
        isError: boolean;
      }>;
      // The agent started its app from bash, in the background, and waited for it from bash.
      const bash = calls.filter((call) => call.tool === 'bash');
      expect(bash.some((call) => call.summary === 'node app/server.js &' && !call.isError)).toBe(
        true,
      );
      // What the browser saw is the agent's page, not the host's: the session's transcript.
      const seen = await transcriptText(path.join(world.home, 'projects', 'loopback'));
      expect(seen).toMatch(/heading[^\n]*F1 ok/);
      expect(seen).not.toContain('HOST CANARY</h1>');
      const browser = calls.filter((call) => call.tool.startsWith('mcp__browser__'));
      expect(browser.some((call) => call.tool.endsWith('browser_snapshot') && !call.isError)).toBe(
        true,
      );
      // F1 passed; F2 (the host's page) never could.
      const features = JSON.parse(
        await readFile(
          path.join(world.home, 'projects', 'loopback', 'memories', 'features.json'),
          'utf8',
        ),
      ) as Array<{ id: string; passes: boolean }>;
      expect(features.map((feature) => [feature.id, feature.passes])).toEqual([
        ['F1', true],
        ['F2', false],
      ]);
      // Nothing on the host's loopback was reached, from bash or the browser.
      expect(samePort.hits).toEqual([]);
      expect(otherPort.hits).toEqual([]);
      // The app ended with its session.
      expect(
        (await processesUnder(world.home)).filter((command) => command.includes('server.js')),
      ).toEqual([]);
    },
  );
});
