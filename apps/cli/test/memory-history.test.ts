import { describe, expect, it, vi } from 'vitest';
import { createLocalProject } from './local-project-fixture.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

// Each test spawns `baton` (a few seconds per process on a loaded 2-core machine).
vi.setConfig({ testTimeout: 120_000 });

const world = redisCliWorld();

async function projectWithTwoVersions(): Promise<string> {
  const id = world.redis.projectId('hist');
  await world.redis.control.createProject({ id, goal: '- one', workspace: world.dir });
  const store = await world.redis.control.memoryStore(id);
  await store.write('notes.md', 'first\n', { mode: 'create', command: 'create', session: 's1' });
  await store.write('notes.md', 'second\n', { mode: 'overwrite', command: 'write', session: 's2' });
  return id;
}

describe('baton memory history', () => {
  it('--json lists the versions newest first with their command and session', async () => {
    const id = await projectWithTwoVersions();
    const result = await world.cli(['memory', 'history', id, '/memories/notes.md', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as {
      path: string;
      versions: Array<{ version: string; bytes: number; command: string; session: string }>;
    };
    expect(parsed.path).toBe('/memories/notes.md');
    expect(
      parsed.versions.map((version) => [version.bytes, version.command, version.session]),
    ).toEqual([
      [7, 'write', 's2'],
      [6, 'create', 's1'],
    ]);
  });

  it('prints a table, and --show prints one old version', async () => {
    const id = await projectWithTwoVersions();
    const table = await world.cli(['memory', 'history', id, 'notes.md']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^VERSION\s+WRITTEN\s+BYTES\s+COMMAND\s+SESSION$/);
    expect(lines).toHaveLength(3);
    const oldest = lines[2]?.split(/\s+/)[0] ?? '';
    const shown = await world.cli(['memory', 'history', id, 'notes.md', '--show', oldest]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe('first\n');
  });

  it('a local project shows its current version only', async () => {
    await createLocalProject(world.dir, 'local-h', { 'progress.md': 'local progress\n' });
    const result = await world.cli([
      'memory',
      'history',
      'local-h',
      '/memories/progress.md',
      '--local',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const parsed = JSON.parse(result.stdout) as {
      versions: Array<{ version: string; bytes: number }>;
    };
    expect(parsed.versions).toEqual([expect.objectContaining({ version: 'current', bytes: 15 })]);
  });

  it.each([
    [['memory', 'history', 'PROJECT', 'missing.md'], 7, 'no versions of /memories/missing.md'],
    [['memory', 'history', 'PROJECT', 'notes.md', '--show', '9:9'], 7, 'no version 9:9'],
    [['memory', 'history', 'nobody-here', 'notes.md'], 7, 'no project nobody-here on Redis'],
    [['memory', 'history', 'PROJECT', '/etc/passwd'], 2, 'bad memory path'],
    [['memory', 'history', 'PROJECT'], 2, "missing required argument 'path'"],
    [['memory', 'history', 'nobody-here', 'a.md', '--local'], 7, 'no project nobody-here under'],
  ])('mistake %j exits %i with one line', async (args, code, message) => {
    const id = await projectWithTwoVersions();
    const result = await world.cli(args.map((arg) => (arg === 'PROJECT' ? id : arg)));
    expect(result.code).toBe(code);
    expect(oneLine(result.stderr)).toContain(message);
  });
});
