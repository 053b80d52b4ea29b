import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startModelSim } from '@baton/model-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

/**
 * One loopback per session through a real worker (`baton enqueue --mcp-config`, `baton worker`
 * on the simulator over HTTP with the real SDK): the agent starts its web app from bash on the
 * very port a host canary listens on, the browser MCP server of the same session checks it (the
 * feature passes only when the page says `F1 ok`), and the host canary gets no request.
 */

const world = redisCliWorld();
let canary: http.Server | undefined;
afterEach(async () => {
  await new Promise((done) => (canary === undefined ? done(null) : canary.close(done)));
  canary = undefined;
});

describe('one sandbox, one loopback per session, through a worker', () => {
  it('the browser checks the app the agent started from bash; the host canary stays unreached', async () => {
    const hits: string[] = [];
    canary = http.createServer((request, response) => {
      hits.push(request.url ?? '');
      response.end('<h1>HOST CANARY</h1>');
    });
    await new Promise<void>((listening) => canary?.listen(0, '127.0.0.1', listening));
    const port = (canary.address() as AddressInfo).port;
    const sim = world.closeAfter(await startModelSim({ port: 0 }));
    const mcpConfig = path.join(world.dir, 'mcp.json');
    await writeFile(
      mcpConfig,
      JSON.stringify({
        mcpServers: { browser: { command: 'npx', args: ['@playwright/mcp@latest'] } },
      }),
    );
    const id = world.redis.projectId('loopback');
    const goal = [
      'A status page, checked in the browser.',
      `- Serve a status page [sim:web-app ${port}] [sim:mcp mcp__browser__browser_navigate {"url":"http://127.0.0.1:${port}/"}] [sim:mcp mcp__browser__browser_snapshot {}] [sim:mcp-expect F1 ok]`,
    ].join('\n');
    const enqueued = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      goal,
      '--mcp-config',
      mcpConfig,
    ]);
    expect(enqueued.stderr).toBe('');
    const worker = world.start(['worker', '--port', '0'], {
      BATON_HOME: path.join(world.dir, 'worker-home'),
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_CHAIN_DELAY_MS: '0',
    });
    await worker.waitForOutput('"worker started"');
    let status: { status: string; features?: unknown } | undefined;
    const deadline = Date.now() + 150_000;
    while (Date.now() < deadline) {
      const result = await world.cli(['status', id, '--json']);
      status = JSON.parse(result.stdout) as { status: string };
      if (['completed', 'failed', 'paused'].includes(status.status)) break;
    }
    worker.kill('SIGTERM');
    await worker.done;
    // Completed: the browser's snapshot of 127.0.0.1:PORT said `F1 ok`, the agent's page.
    expect(status?.status).toBe('completed');
    expect(hits).toEqual([]);
  }, 240_000);
});
