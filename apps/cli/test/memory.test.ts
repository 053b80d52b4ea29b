import { describe, expect, it } from 'vitest';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

async function seed() {
  const id = world.redis.projectId('mem');
  await world.redis.control.createProject({ id, goal: '- a' });
  const store = await world.redis.control.memoryStore(id);
  await store.write('progress.md', '# Progress\nSession 1\n', { mode: 'create' });
  await store.write('notes/today.md', 'hi', { mode: 'create' });
  await store.close();
  return id;
}

describe('baton memory ls|cat', () => {
  it('ls lists /memories from Redis, cat prints a file', async () => {
    const id = await seed();
    const ls = await world.cli(['memory', 'ls', id]);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/\/memories\/notes\/$/m);
    expect(ls.stdout).toMatch(/^\s+2\s+\/memories\/notes\/today\.md$/m);
    expect(ls.stdout).toMatch(/\/memories\/progress\.md$/m);
    const cat = await world.cli(['memory', 'cat', id, '/memories/progress.md']);
    expect(cat.code).toBe(0);
    expect(cat.stdout).toBe('# Progress\nSession 1\n');
    const json = await world.cli(['memory', 'ls', id, 'notes', '--json']);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ path: '/memories/notes/today.md', kind: 'file', size: 2 }),
    ]);
  });

  it('ls --depth lists that many levels below the directory', async () => {
    const { redis } = world;
    const id = await seed();
    const store = await redis.control.memoryStore(id);
    await store.write('notes/deep/deeper/bottom.md', 'x', { mode: 'create' });
    await store.close();
    const list = async (...args: string[]) =>
      (await world.cli(['memory', 'ls', id, ...args])).stdout;
    const one = await list('--depth', '1');
    expect(one).toMatch(/\/memories\/notes\/$/m);
    expect(one).not.toContain('today.md');
    const byDefault = await list();
    expect(byDefault).toContain('/memories/notes/today.md');
    expect(byDefault).not.toContain('bottom.md');
    expect(await list('--depth', '4')).toContain('/memories/notes/deep/deeper/bottom.md');
    const bad = await world.cli(['memory', 'ls', id, '--depth', '0']);
    expect(bad.code).toBe(2);
    oneLine(bad.stderr);
  });

  it('missing files, directories given to cat and hostile paths are one line each', async () => {
    const id = await seed();
    const missing = await world.cli(['memory', 'cat', id, 'nope.md']);
    expect(missing.code).toBe(7);
    expect(oneLine(missing.stderr)).toContain('/memories/nope.md');
    const directory = await world.cli(['memory', 'cat', id, 'notes']);
    expect(directory.code).toBe(2);
    oneLine(directory.stderr);
    const hostile = await world.cli(['memory', 'cat', id, '/memories/../etc/passwd']);
    expect(hostile.code).toBe(2);
    oneLine(hostile.stderr);
    const unknown = await world.cli(['memory', 'ls', 'ghost-2']);
    expect(unknown.code).toBe(7);
    oneLine(unknown.stderr);
  });
});
