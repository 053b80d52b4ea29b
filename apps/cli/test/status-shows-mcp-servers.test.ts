import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

/**
 * `baton status` shows a queued project's MCP servers from the user's entry points: a project
 * enqueued with `--mcp-config`, run by a real worker process (which adds its own
 * `BATON_MCP_CONFIG` server), lists its own servers and each server's state in the latest
 * session, in text and JSON, and never a `${VAR}`'s value.
 */

const world = redisCliWorld();

interface StatusJson {
  status: string;
  mcpServers: Array<{ name: string; type: string }>;
  sessionCommits: Array<{ mcp: Array<{ server: string; state: string; tools: number }> }>;
}

describe('baton status with MCP servers', () => {
  it('lists the servers of an enqueued project and their state in the session a worker ran', async () => {
    const secret = `tok-${Math.random().toString(36).slice(2)}`;
    const projectMcp = path.join(world.dir, 'project-mcp.json');
    const workerMcp = path.join(world.dir, 'worker-mcp.json');
    await writeFile(
      projectMcp,
      JSON.stringify({
        mcpServers: {
          everything: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-everything'],
            env: { SERVICE_TOKEN: '${MCP_STATUS_TOKEN}' },
          },
          remote: { type: 'http', url: 'https://mcp.example.invalid/mcp' },
        },
      }),
    );
    await writeFile(
      workerMcp,
      JSON.stringify({ mcpServers: { broken: { command: 'no-such-mcp-server' } } }),
    );
    const id = world.redis.projectId('mcp');
    const goal =
      'Echo through MCP.\n- Echo [sim:mcp mcp__everything__echo {"message":"F1 ok"}] [sim:mcp-expect F1 ok]';
    const enqueued = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      goal,
      '--mcp-config',
      projectMcp,
    ]);
    expect(enqueued.stderr).toBe('');
    expect(enqueued.code).toBe(0);

    // Before any session: the project's own servers, no states yet.
    const before = await world.cli(['status', id]);
    expect(before.stdout).toContain('mcp       everything, remote\n');
    expect(before.stdout).not.toContain(' in session ');

    const worker = world.startWorker('worker-home', {
      BATON_CHAIN_DELAY_MS: '0',
      BATON_MCP_CONFIG: workerMcp,
      MCP_STATUS_TOKEN: secret,
    });
    await worker.waitForOutput('"worker started"');
    let status: StatusJson | undefined;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const result = await world.cli(['status', id, '--json']);
      status = JSON.parse(result.stdout) as StatusJson;
      if (['completed', 'failed', 'paused'].includes(status.status)) break;
    }
    worker.kill('SIGTERM');
    await worker.done;
    expect(status?.status).toBe('completed');
    expect(status?.mcpServers).toEqual([
      { name: 'everything', type: 'stdio' },
      { name: 'remote', type: 'http' },
    ]);
    const states = Object.fromEntries(
      (status?.sessionCommits.at(-1)?.mcp ?? []).map((server) => [server.server, server]),
    );
    expect(states.everything).toMatchObject({ state: 'ready' });
    expect(states.everything?.tools).toBeGreaterThan(5);
    expect(states.broken).toMatchObject({ state: 'failed', tools: 0 });
    expect(states.remote).toMatchObject({ state: 'failed', tools: 0 });

    const text = await world.cli(['status', id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('mcp       everything, remote\n');
    expect(text.stdout).toMatch(/\n {2}everything: ready \(\d+ tools\) in session \d+\n/);
    expect(text.stdout).toMatch(/\n {2}broken: failed in session \d+ · [^\n]+\n/);
    expect(text.stdout).toMatch(/\n {2}remote: failed in session \d+ · [^\n]*not allowed[^\n]*\n/);
    expect(text.stdout + JSON.stringify(status)).not.toContain(secret);
  }, 180_000);
});
