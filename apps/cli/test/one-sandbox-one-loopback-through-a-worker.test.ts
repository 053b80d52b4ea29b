import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startModelSim, type ModelSim } from '@baton/model-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from './helpers.js';
import { useRedisWorld, type RedisWorld } from './redis-fixtures.js';

/**
 * One loopback per session through a real worker (`baton enqueue --mcp-config`, `baton worker`
 * on the simulator over HTTP with the real SDK): the agent starts its web app from bash on the
 * very port a host canary listens on, the browser MCP server of the same session checks it (the
 * feature passes only when the page says `F1 ok`), and the host canary gets no request.
 */

let dir: string;
let world: RedisWorld;
useRedisWorld((fixture) => ({ dir, world } = fixture));
let sim: ModelSim | undefined;
let canary: http.Server | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
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
    sim = await startModelSim({ port: 0 });
    await writeFile(
      path.join(dir, 'mcp.json'),
      JSON.stringify({
        mcpServers: { browser: { command: 'npx', args: ['@playwright/mcp@latest'] } },
      }),
    );
    const id = world.projectId('loopback');
    const goal = [
      'A status page, checked in the browser.',
      `- Serve a status page [sim:web-app ${port}] [sim:mcp mcp__browser__browser_navigate {"url":"http://127.0.0.1:${port}/"}] [sim:mcp mcp__browser__browser_snapshot {}] [sim:mcp-expect F1 ok]`,
    ].join('\n');
    const enqueued = await runCli(
      ['enqueue', '--project', id, '--goal', goal, '--mcp-config', path.join(dir, 'mcp.json')],
      { cwd: dir, env: world.env(dir) },
    );
    expect(enqueued.stderr).toBe('');
    const worker = startCli(['worker', '--port', '0'], {
      cwd: dir,
      env: world.env(path.join(dir, 'worker-home'), {
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: sim.url,
        BATON_CHAIN_DELAY_MS: '0',
      }),
    });
    let status: { status: string; features?: unknown } | undefined;
    try {
      await worker.waitForOutput('"worker started"');
      const deadline = Date.now() + 150_000;
      while (Date.now() < deadline) {
        const result = await runCli(['status', id, '--json'], { cwd: dir, env: world.env(dir) });
        status = JSON.parse(result.stdout) as { status: string };
        if (['completed', 'failed', 'paused'].includes(status.status)) break;
      }
    } finally {
      worker.kill('SIGTERM');
    }
    await worker.done;
    // Completed: the browser's snapshot of 127.0.0.1:PORT said `F1 ok`, the agent's page.
    expect(status?.status).toBe('completed');
    expect(hits).toEqual([]);
  }, 240_000);
});
