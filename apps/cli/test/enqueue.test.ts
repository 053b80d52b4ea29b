import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createUserRepo } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { closedPort, oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton enqueue', () => {
  it('stores the project with its options and queues session 1', async () => {
    const { redis } = world;
    const id = redis.projectId('enq');
    const result = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      'Build\n- a\n- b',
      '--workspace',
      'ws',
      '--model',
      'claude-x',
      '--budget-usd',
      '2.5',
      '--max-sessions',
      '7',
      '--preset',
      'long-horizon',
      '--json',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({
      id,
      status: 'queued',
      features: { passing: 0, total: 0 },
      jobId: `${id}@1`,
    });
    const project = await redis.control.getProject(id);
    expect(project).toMatchObject({
      workspace: `${world.dir}/ws`,
      model: 'claude-x',
      contextPreset: 'long-horizon',
      budgets: { maxUsd: 2.5, maxSessions: 7 },
    });
    expect((await redis.control.queueCounts()).waiting).toBe(1);
  });

  it('--allow-host (repeatable) stores the hosts the sandbox proxy lets through; status shows them', async () => {
    const { redis } = world;
    const id = redis.projectId('hosts');
    const result = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      'Build\n- a',
      '--allow-host',
      'registry.npmjs.org',
      '--allow-host',
      '*.pythonhosted.org',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((await redis.control.getProject(id))?.sandbox).toEqual({
      allowedHosts: ['registry.npmjs.org', '*.pythonhosted.org'],
    });
    const status = await world.cli(['status', id]);
    expect(status.stdout).toContain('registry.npmjs.org');
    expect(status.stdout).toContain('*.pythonhosted.org');

    const bad = redis.projectId('badhost');
    for (const host of ['http://registry.npmjs.org', 'exa mple.com', '*']) {
      const refused = await world.cli([
        'enqueue',
        '--project',
        bad,
        '--goal',
        'x',
        '--allow-host',
        host,
      ]);
      expect(refused.code, host).toBe(2);
      oneLine(refused.stderr);
    }
    expect(await redis.control.getProject(bad)).toBeNull();
  });

  it('stores the context config of baton.config.json and BATON_CONTEXT_* where it runs; status shows it', async () => {
    const { redis } = world;
    await writeFile(
      path.join(world.dir, 'baton.config.json'),
      JSON.stringify({ context: { preset: 'search-heavy' } }),
    );
    const id = redis.projectId('ctx');
    const result = await world.cli(['enqueue', '--project', id, '--goal', 'Build\n- a'], {
      BATON_CONTEXT_CACHE_TTL: '1h',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(await redis.control.getProject(id)).toMatchObject({
      contextPreset: 'search-heavy',
      context: { preset: 'search-heavy', promptCache: { prefixTtl: '1h' } },
    });
    const status = await world.cli(['status', id]);
    expect(status.stdout).toContain(
      'context   search-heavy · edits clear_tool_uses · cache on (ttl 1h)\n',
    );
    const json = await world.cli(['status', id, '--json']);
    expect((JSON.parse(json.stdout) as { context: unknown }).context).toEqual({
      preset: 'search-heavy',
      promptCache: { prefixTtl: '1h' },
    });

    // --preset is over both; BATON_CONTEXT_PROMPT_CACHE=off is stored as caching off.
    const flagged = redis.projectId('ctx2');
    await world.cli(['enqueue', '--project', flagged, '--goal', 'x', '--preset', 'off'], {
      BATON_CONTEXT_PROMPT_CACHE: 'off',
    });
    const status2 = await world.cli(['status', flagged]);
    expect(status2.stdout).toContain('context   off · no edits · cache off\n');
  });

  it('refuses a bad BATON_CONTEXT_* in one line, storing nothing', async () => {
    const id = world.redis.projectId('badctx');
    const result = await world.cli(['enqueue', '--project', id, '--goal', 'x'], {
      BATON_CONTEXT_KEEP_TOOL_USES: 'many',
    });
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toBe(
      'baton: invalid context config: env: BATON_CONTEXT_KEEP_TOOL_USES: must be a whole number >= 0 (got "many").',
    );
    expect(await world.redis.control.getProject(id)).toBeNull();
  });

  it('rejects bad arguments with one line and exit code 2, writing nothing', async () => {
    const id = world.redis.projectId('bad');
    const cases: string[][] = [
      ['enqueue', '--project', id],
      ['enqueue', '--project', id, '--goal', 'x', '--budget-usd', '-1'],
      ['enqueue', '--project', id, '--goal', 'x', '--max-sessions', '0'],
      ['enqueue', '--project', id, '--goal', 'x', '--preset', 'huge'],
      ['enqueue', '--project', 'no spaces', '--goal', 'x'],
      ['enqueue', '--goal', 'x'],
    ];
    for (const args of cases) {
      const result = await world.cli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(oneLine(result.stderr)).toMatch(/^baton: /);
    }
    expect(await world.redis.control.getProject(id)).toBeNull();
  });

  it('refuses a --workspace that is a git checkout of its own at creation, naming --repo', async () => {
    const { redis } = world;
    const id = redis.projectId('checkout');
    const checkout = await createUserRepo(world.dir);
    const result = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      'x',
      '--workspace',
      checkout,
    ]);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain(
      `--workspace ${checkout} is a git repository; give it as --repo ${checkout}`,
    );
    expect(await redis.control.getProject(id)).toBeNull();
    expect((await redis.control.queueCounts()).waiting).toBe(0);
  });

  it('refuses an id that is taken and says how to continue it', async () => {
    const id = world.redis.projectId('dup');
    await world.redis.control.createProject({ id, goal: 'x' });
    const result = await world.cli(['enqueue', '--project', id, '--goal', 'y']);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain(`project ${id} already exists`);
  });

  it('fails with one line when Redis does not answer', async () => {
    const port = await closedPort();
    const result = await world.cli(['enqueue', '--project', 'x1', '--goal', 'y'], {
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(result.code).toBe(8);
    expect(oneLine(result.stderr)).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1/);
  });
});
