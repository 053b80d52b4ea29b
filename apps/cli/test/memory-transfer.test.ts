import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createLocalProject } from './local-project-fixture.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

// Each test spawns `baton` (a few seconds per process on a loaded 2-core machine).
vi.setConfig({ testTimeout: 120_000 });

const world = redisCliWorld();

describe('baton memory export / import', () => {
  it('round-trips Redis -> folder -> another Redis project, nested folders included', async () => {
    const { redis } = world;
    const source = redis.projectId('src');
    const target = redis.projectId('dst');
    for (const id of [source, target])
      await redis.control.createProject({ id, goal: '- one', workspace: world.dir });
    const store = await redis.control.memoryStore(source);
    await store.write('progress.md', '# Progress\n', { mode: 'create' });
    await store.write('notes/deep/idea.md', 'ünïcode ✓\n', { mode: 'create' });

    const out = path.join(world.dir, 'export');
    const exported = await world.cli(['memory', 'export', source, out, '--json']);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual({
      project: source,
      directory: out,
      files: 2,
      bytes: 11 + Buffer.byteLength('ünïcode ✓\n'),
    });
    expect(await readFile(path.join(out, 'notes', 'deep', 'idea.md'), 'utf8')).toBe('ünïcode ✓\n');

    const imported = await world.cli(['memory', 'import', target, out]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/^Imported 2 files \(\d+ bytes\) from /);
    const targetStore = await redis.control.memoryStore(target);
    expect(await targetStore.read('notes/deep/idea.md')).toBe('ünïcode ✓\n');
    expect(await targetStore.read('progress.md')).toBe('# Progress\n');
  });

  it('works on a local project with --local', async () => {
    await createLocalProject(world.dir, 'local-a', { 'progress.md': 'p\n', 'sub/x.txt': 'x' });
    await createLocalProject(world.dir, 'local-b');
    const out = path.join(world.dir, 'out');
    const exported = await world.cli(['memory', 'export', 'local-a', out, '--local']);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(/^Exported 2 files \(3 bytes\) to /);
    const imported = await world.cli(['memory', 'import', 'local-b', out, '--local', '--json']);
    expect(imported.code).toBe(0);
    expect(
      await readFile(
        path.join(world.dir, 'projects', 'local-b', 'memories', 'sub', 'x.txt'),
        'utf8',
      ),
    ).toBe('x');
  });

  it('export refuses a non-empty folder without --force (exit 2)', async () => {
    await createLocalProject(world.dir, 'local-a', { 'progress.md': 'p\n' });
    const out = path.join(world.dir, 'full');
    await mkdir(out);
    await writeFile(path.join(out, 'keep.txt'), 'mine');
    const refused = await world.cli(['memory', 'export', 'local-a', out, '--local']);
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toContain(
      'is not empty; choose an empty folder or add --force',
    );
    const forced = await world.cli(['memory', 'export', 'local-a', out, '--local', '--force']);
    expect(forced.code).toBe(0);
    expect(await readFile(path.join(out, 'keep.txt'), 'utf8')).toBe('mine');
  });

  it('import refuses links and leaves the memory untouched (exit 2)', async () => {
    await createLocalProject(world.dir, 'local-a');
    const input = path.join(world.dir, 'in');
    await mkdir(input);
    await writeFile(path.join(input, 'a.md'), 'a');
    await symlink('/etc/hostname', path.join(input, 'b.md'));
    const result = await world.cli(['memory', 'import', 'local-a', input, '--local']);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain('links are not imported');
    await expect(
      readFile(path.join(world.dir, 'projects', 'local-a', 'memories', 'a.md'), 'utf8'),
    ).rejects.toThrow();
  });

  it('a file name a memory path refuses is quoted on one error line, and nothing is imported', async () => {
    await createLocalProject(world.dir, 'local-a');
    const input = path.join(world.dir, 'in');
    await mkdir(input);
    await writeFile(path.join(input, 'a.md'), 'a');
    await writeFile(path.join(input, 'bad\nname.md'), 'b');
    const result = await world.cli(['memory', 'import', 'local-a', input, '--local']);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain(
      `cannot import ${JSON.stringify(path.join(input, 'bad\nname.md'))}: `,
    );
    await expect(
      readFile(path.join(world.dir, 'projects', 'local-a', 'memories', 'a.md'), 'utf8'),
    ).rejects.toThrow();
  });

  it.each([
    [['memory', 'import', 'nobody-x', 'DIR'], 7, 'no project nobody-x on Redis'],
    [['memory', 'import', 'nobody-x', 'missing-dir'], 2, 'no folder'],
    [['memory', 'export', 'nobody-x', 'DIR', '--local'], 7, 'no project nobody-x under'],
  ])('mistake %j exits %i with one line', async (args, code, message) => {
    const result = await world.cli(args.map((arg) => (arg === 'DIR' ? world.dir : arg)));
    expect(result.code).toBe(code);
    expect(oneLine(result.stderr)).toContain(message);
  });
});
