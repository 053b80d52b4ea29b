import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli } from './helpers.js';

/**
 * MCP servers from the user's entry points: `baton run --mcp-config FILE` (kept with the project)
 * and `BATON_MCP_CONFIG` (the worker-wide file) start real servers in the sandbox; the simulator's
 * agent calls their tools and the run says which started; a bad file is one line and
 * creates nothing; a `${VAR}` is resolved from the environment and never stored.
 */

const world = cliWorld();

async function events(project: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path.join(world.home, 'projects', project, 'events.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('baton run with MCP servers', () => {
  it('starts --mcp-config and BATON_MCP_CONFIG servers and the agent calls them', async () => {
    const secret = `tok-${Math.random().toString(36).slice(2)}`;
    await writeFile(
      path.join(world.dir, 'project-mcp.json'),
      JSON.stringify({
        mcpServers: {
          everything: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-everything'],
            env: { SERVICE_TOKEN: '${MCP_TEST_SERVICE_TOKEN}' },
          },
        },
      }),
    );
    await writeFile(
      path.join(world.dir, 'worker-mcp.json'),
      JSON.stringify({ mcpServers: { broken: { command: 'no-such-mcp-server' } } }),
    );
    await writeFile(
      path.join(world.dir, 'goal.md'),
      [
        'Echo through MCP.',
        '- Echo the marker [sim:mcp mcp__everything__echo {"message":"F1 ok"}] [sim:mcp-expect F1 ok]',
        '',
      ].join('\n'),
    );
    const env = cliEnv(world.home, {
      BATON_MCP_CONFIG: path.join(world.dir, 'worker-mcp.json'),
      MCP_TEST_SERVICE_TOKEN: secret,
    });
    const result = await runCli(
      [
        'run',
        '--goal-file',
        path.join(world.dir, 'goal.md'),
        '--project',
        'mcp',
        '--sessions',
        '2',
        '--mcp-config',
        path.join(world.dir, 'project-mcp.json'),
      ],
      { cwd: world.dir, env },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'MCP servers: broken (no-such-mcp-server, worker), everything (npx -y, project)',
    );
    expect(result.stdout).toMatch(/MCP server everything \(project, stdio\): ready · \d+ tools/);
    expect(result.stdout).toContain('MCP server broken is unavailable:');
    const all = await events('mcp');
    const calls = all.filter(
      (event) => event.type === 'tool-call' && event.tool === 'mcp__everything__echo',
    );
    expect(calls.length).toBeGreaterThan(0);
    // The reference is kept as written; the value was only in the server's environment.
    const record = await readFile(path.join(world.home, 'projects', 'mcp', 'project.json'), 'utf8');
    expect(record).toContain('${MCP_TEST_SERVICE_TOKEN}');
    expect(record).not.toContain(secret);
    expect(JSON.stringify(all)).not.toContain(secret);
    // `baton status --local` shows the project's servers and how each stood in its last session.
    const status = await runCli(['status', 'mcp', '--local'], { cwd: world.dir, env });
    expect(status.stderr).toBe('');
    expect(status.stdout).toContain('mcp       everything\n');
    expect(status.stdout).toMatch(/\n {2}everything: ready \(\d+ tools\) in session \d\n/);
    expect(status.stdout).toMatch(/\n {2}broken: failed in session \d · [^\n]+\n/);
    const json = await runCli(['status', 'mcp', '--local', '--json'], { cwd: world.dir, env });
    const parsed = JSON.parse(json.stdout) as {
      mcpServers: unknown;
      sessionCommits: Array<{ mcp: Array<{ server: string; state: string }> }>;
    };
    expect(parsed.mcpServers).toEqual([{ name: 'everything', type: 'stdio' }]);
    expect(
      parsed.sessionCommits.at(-1)?.mcp.map((server) => [server.server, server.state]),
    ).toEqual([
      ['broken', 'failed'],
      ['everything', 'ready'],
    ]);
    expect(status.stdout + json.stdout).not.toContain(secret);
    const noId = await runCli(['status', '--local'], { cwd: world.dir, env });
    expect(noId.code).toBe(2);
    expect(noId.stderr).toBe('baton: baton status --local needs a project id\n');
  });

  it('refuses a bad --mcp-config in one line naming the field, and creates nothing', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { mcpServers: { x: { args: ['a'] } } },
        /^baton: --mcp-config .*: mcpServers\.x: must be \{"command"/,
      ],
      [{ mcpServers: { a__b: { command: 'x' } } }, /mcpServers\.a__b: server names are/],
      [
        { mcpServers: { x: { command: 'x', env: { KEY: 'sk-ant-api03-' + 'a'.repeat(90) } } } },
        /mcpServers\.x\.env\.KEY: looks like a secret/,
      ],
      [{ servers: {} }, /Unrecognized key|mcpServers/],
    ];
    for (const [config, expected] of cases) {
      await writeFile(path.join(world.dir, 'bad.json'), JSON.stringify(config));
      const result = await runCli(
        [
          'run',
          '--goal',
          'x',
          '--project',
          'bad',
          '--mcp-config',
          path.join(world.dir, 'bad.json'),
        ],
        { cwd: world.dir, env: cliEnv(world.home) },
      );
      expect(result.code, JSON.stringify(config)).toBe(2);
      expect(result.stderr).toMatch(expected);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    await writeFile(path.join(world.dir, 'bad.json'), '{ not json');
    const notJson = await runCli(
      ['run', '--goal', 'x', '--project', 'bad', '--mcp-config', path.join(world.dir, 'bad.json')],
      { cwd: world.dir, env: cliEnv(world.home) },
    );
    expect(notJson.stderr).toMatch(/^baton: --mcp-config .*bad\.json is not valid JSON\n$/);
    const worker = await runCli(['run', '--goal', 'x', '--project', 'bad'], {
      cwd: world.dir,
      env: cliEnv(world.home, { BATON_MCP_CONFIG: path.join(world.dir, 'missing.json') }),
    });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toBe('baton: BATON_MCP_CONFIG cannot be read (ENOENT)\n');
    const projects = await runCli(['projects', '--local'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(projects.stdout).not.toContain('bad');
  });
});
