import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SimScriptRequest } from '@baton/model-sim';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type SessionEvent, parseMcpConfig, readFeatures, runSession } from '../src/index.js';
import { createHarness, type Harness } from './helpers.js';

/**
 * A whole session on the simulator with real MCP servers in the sandbox: the servers' tools
 * reach the model as `mcp__<server>__<tool>` in one fixed, sorted tool list (the cached prefix
 * stays the same on every request), the scripted agent calls them (`[sim:mcp ...]`), results and
 * images go back as tool results, calls show as tool-call events, and a server that cannot
 * start is one line to the model while the session goes on. The browser: the Playwright MCP
 * server with the system Chromium, in the sandbox, checks a web app the agent wrote and that
 * runs beside it on the sandbox's loopback.
 */

vi.setConfig({ testTimeout: 240_000 });

let harness: Harness | undefined;
let requests: SimScriptRequest[] = [];
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  requests = [];
});

function recordingHarness(): Promise<Harness> {
  return createHarness({
    script: (request) => {
      requests.push(request);
      return undefined;
    },
  });
}

/** The init session of `goal` (no MCP), then the requests of the next session are recorded. */
async function initialise(goal: string): Promise<void> {
  const init = await runSession(
    harness!.options({ kind: 'init', project: { id: 'todo', goal }, mcp: { repository: false } }),
  );
  expect(init.outcome).toBe('completed');
  requests = [];
  harness!.events.length = 0;
}

function toolNames(request: SimScriptRequest): string[] {
  return (request.params.tools ?? []).map((tool) => ('name' in tool ? tool.name : ''));
}

function mcpEvents(events: readonly SessionEvent[]) {
  return events.flatMap((event) =>
    event.type === 'mcp-server' ? [[event.server, event.state, event.message ?? '']] : [],
  );
}

describe('MCP tools in a session', () => {
  it('offers the servers tools in a fixed sorted list, runs the calls, and goes on without a broken server', async () => {
    harness = await recordingHarness();
    const goal = [
      'Echo through MCP.',
      '- Echo the marker [sim:mcp mcp__everything__get-tiny-image {}] [sim:mcp mcp__everything__echo {"message":"F1 ok"}] [sim:mcp-expect F1 ok]',
    ].join('\n');
    await initialise(goal);
    const result = await runSession(
      harness.options({
        kind: 'resume',
        project: { id: 'todo', goal },
        mcp: {
          project: parseMcpConfig({
            mcpServers: {
              everything: {
                command: 'npx',
                args: ['-y', '@modelcontextprotocol/server-everything'],
              },
              broken: { command: 'no-such-server' },
            },
          }),
          environment: {},
        },
      }),
    );
    expect(result.outcome).toBe('completed');
    expect(mcpEvents(harness.events)).toEqual([
      ['broken', 'failed', expect.stringMatching(/^MCP server broken is unavailable: /)],
      ['everything', 'ready', ''],
    ]);
    // One tool list for the whole session: built-ins first, then the MCP tools sorted.
    const lists = new Set(requests.map((request) => JSON.stringify(request.params.tools)));
    expect(lists.size).toBe(1);
    const names = toolNames(requests[0]!);
    expect(names.slice(0, 3)).toEqual(['memory', 'bash', 'str_replace_based_edit_tool']);
    const mcp = names.slice(3);
    expect(mcp).toEqual([...mcp].sort());
    expect(mcp).toContain('mcp__everything__echo');
    // The model was told about the broken server in one line, after the prompt.
    const first = JSON.stringify(requests[0]!.params.messages[0]);
    expect(first).toContain('MCP server broken is unavailable');
    // The calls ran and were recorded like other tools.
    const calls = harness.events.flatMap((event) =>
      event.type === 'tool-call' && event.tool.startsWith('mcp__') ? [event] : [],
    );
    expect(calls.map((call) => [call.tool, call.isError])).toEqual([
      ['mcp__everything__get-tiny-image', false],
      ['mcp__everything__echo', false],
    ]);
    // The image went back as an image block inside the tool result.
    const image = requests
      .flatMap((request) => request.params.messages)
      .flatMap((message) => (typeof message.content === 'string' ? [] : message.content))
      .find(
        (block) =>
          block?.type === 'tool_result' &&
          Array.isArray(block.content) &&
          block.content.some((part) => part.type === 'image'),
      );
    expect(image).toBeDefined();
    const features = await readFeatures(harness.store);
    expect(features?.find((feature) => feature.id === 'F1')?.passes).toBe(true);
  });

  it('the browser: Playwright MCP with the system Chromium checks the web app the agent wrote, on the sandbox loopback', async () => {
    harness = await recordingHarness();
    const port = 8000 + Math.floor(Math.random() * 1000);
    const goal = [
      'A tiny web app.',
      `- Serve a status page [sim:web-app ${port}] [sim:mcp mcp__browser__browser_navigate {"url":"http://127.0.0.1:${port}/"}] [sim:mcp mcp__browser__browser_snapshot {}] [sim:mcp-expect F1 ok]`,
    ].join('\n');
    await initialise(goal);
    // The agent starts the app from bash (`node app/server.js &`); the browser server reaches it
    // on the session's one loopback.
    await writeFile(
      path.join(harness.workspace, '.mcp.json'),
      JSON.stringify({
        mcpServers: { browser: { command: 'npx', args: ['@playwright/mcp@latest'] } },
      }),
    );
    const result = await runSession(
      harness.options({ kind: 'resume', project: { id: 'todo', goal }, mcp: { environment: {} } }),
    );
    expect(mcpEvents(harness.events)).toEqual([['browser', 'ready', '']]);
    const calls = harness.events.flatMap((event) =>
      event.type === 'tool-call' && event.tool.startsWith('mcp__') ? [event] : [],
    );
    expect(calls.at(-1)).toMatchObject({ tool: 'mcp__browser__browser_snapshot', isError: false });
    expect(result.outcome).toBe('completed');
    const features = await readFeatures(harness.store);
    expect(features?.find((feature) => feature.id === 'F1')?.passes).toBe(true);
    // What the browser saw is what the agent's app served.
    const results = requests
      .flatMap((request) => request.params.messages)
      .flatMap((message) => (typeof message.content === 'string' ? [] : message.content))
      .flatMap((block) => (block?.type === 'tool_result' ? [JSON.stringify(block.content)] : []));
    expect(results.some((text) => text.includes('F1 ok') && text.includes('heading'))).toBe(true);
  });
});
