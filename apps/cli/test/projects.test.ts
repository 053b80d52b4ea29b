import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { closedPort, oneLine, redisCliWorld } from './redis-fixtures.js';

// Each test spawns `baton` (a few seconds per process on a loaded 2-core machine).
vi.setConfig({ testTimeout: 120_000 });

const world = redisCliWorld();

async function seedProjects() {
  const queued = world.redis.projectId('alpha');
  const cancelled = world.redis.projectId('beta');
  await world.redis.control.createProject({
    id: queued,
    goal: '- one\n- two',
    workspace: world.dir,
  });
  await world.redis.control.createProject({ id: cancelled, goal: '- three', workspace: world.dir });
  await world.redis.control.cancel(cancelled);
  return { queued, cancelled };
}

describe('baton projects', () => {
  it('prints a table with status, features, sessions, tokens and USD for every project', async () => {
    const { queued, cancelled } = await seedProjects();
    const result = await world.cli(['projects']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^ID\s+STATUS\s+FEATURES\s+CHECKS\s+SESSIONS\s+TOKENS\s+CACHED\s+USD\s+SANDBOX$/,
    );
    expect(lines.find((line) => line.startsWith(queued))).toMatch(
      /queued\s+0\/0\s+0v 0c 0r\s+0\s+0\s+-\s+\$0\.0000\s+-$/,
    );
    expect(lines.find((line) => line.startsWith(cancelled))).toMatch(/cancelled/);
    expect(lines).toHaveLength(3);
  });

  it('--json prints an array of rows with numeric fields', async () => {
    const { queued } = await seedProjects();
    const result = await world.cli(['projects', '--json']);
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(2);
    expect(rows.find((row) => row.id === queued)).toEqual({
      id: queued,
      status: 'queued',
      statusReason: 'created',
      sandbox: null,
      featuresPassing: 0,
      featuresTotal: 0,
      featuresVerified: 0,
      featuresClaimed: 0,
      featuresRegressed: 0,
      sessions: 0,
      inputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
    });
  });

  it('--status keeps only projects with that status', async () => {
    const { cancelled } = await seedProjects();
    const result = await world.cli(['projects', '--status', 'cancelled', '--json']);
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as Array<{ id: string }>).map((row) => row.id)).toEqual([
      cancelled,
    ]);
  });

  it('says so when there are no projects', async () => {
    const result = await world.cli(['projects']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('No projects yet');
  });

  it('--local lists `baton run` projects; an older project.json is upgraded once (features from its memory, no totals: 0)', async () => {
    const project = path.join(world.dir, 'projects', 'local-one');
    await mkdir(path.join(project, 'memories'), { recursive: true });
    await writeFile(
      path.join(project, 'project.json'),
      JSON.stringify({
        id: 'local-one',
        goal: 'x',
        workspace: world.dir,
        createdAt: new Date().toISOString(),
        sessions: 2,
        running: false,
        lastOutcome: 'completed',
      }),
    );
    await writeFile(
      path.join(project, 'memories', 'features.json'),
      JSON.stringify([
        { id: 'F1', description: 'a', steps: ['s'], passes: true },
        { id: 'F2', description: 'b', steps: ['s'], passes: false },
      ]),
    );
    const result = await world.cli(['projects', '--local', '--json']);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual([
      expect.objectContaining({
        id: 'local-one',
        status: 'paused',
        featuresPassing: 1,
        featuresTotal: 2,
        sessions: 2,
        costUsd: 0,
      }),
    ]);
  });
});

describe('baton projects: mistakes give one line and a meaningful exit code', () => {
  it('an unknown --status is a usage error (2)', async () => {
    const result = await world.cli(['projects', '--status', 'sleeping']);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain('Allowed choices are queued, running');
  });

  it('unreachable Redis exits 8 naming the URL', async () => {
    const port = await closedPort();
    const result = await world.cli(['projects'], { REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(result.code).toBe(8);
    expect(oneLine(result.stderr)).toMatch(
      new RegExp(`^baton: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}`),
    );
  });

  it('a REDIS_URL that is not a redis URL exits 2', async () => {
    const result = await world.cli(['projects'], { REDIS_URL: 'http://localhost:6379' });
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toBe(
      'baton: REDIS_URL must start with redis:// or rediss://, got "http://localhost:6379".',
    );
  });
});
