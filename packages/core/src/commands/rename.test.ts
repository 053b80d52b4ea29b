import { describe, expect, it } from 'vitest';
import { createMemoryTool } from '../memory-tool.js';
import { createInMemoryStore } from '../stores/in-memory-store.js';

function setup() {
  const store = createInMemoryStore();
  const tool = createMemoryTool({ store });
  const rename = (old_path: string, new_path: string) =>
    tool.execute({ command: 'rename', old_path, new_path });
  return { store, tool, rename };
}

describe('rename', () => {
  it('moves a file, creating missing parents, with the protocol string', async () => {
    const { store, rename } = setup();
    await store.write('a.md', 'x', { mode: 'create' });
    expect(await rename('/memories/a.md', '/memories/archive/2026/a.md')).toEqual({
      content: 'Successfully renamed /memories/a.md to /memories/archive/2026/a.md',
      isError: false,
    });
    expect(await store.read('archive/2026/a.md')).toBe('x');
    expect(await store.stat('a.md')).toBeNull();
  });

  it('moves a directory with all its descendants', async () => {
    const { store, rename } = setup();
    await store.write('dir/a.md', 'a', { mode: 'create' });
    await store.write('dir/sub/b.md', 'b', { mode: 'create' });
    expect((await rename('/memories/dir', '/memories/moved')).isError).toBe(false);
    expect((await store.list('', { depth: 5 })).map((entry) => entry.path)).toEqual([
      'moved',
      'moved/a.md',
      'moved/sub',
      'moved/sub/b.md',
    ]);
  });

  it('never overwrites an existing file or directory', async () => {
    const { store, rename } = setup();
    await store.write('a.md', 'a', { mode: 'create' });
    await store.write('b.md', 'b', { mode: 'create' });
    await store.write('dir/c.md', 'c', { mode: 'create' });
    for (const destination of ['/memories/b.md', '/memories/dir', '/memories/dir/']) {
      const canonical = destination.replace(/\/$/, '');
      expect(await rename('/memories/a.md', destination)).toEqual({
        content: `Error: The destination ${canonical} already exists`,
        isError: true,
      });
    }
    expect(await store.read('a.md')).toBe('a');
    expect(await store.read('b.md')).toBe('b');
  });

  it('answers a missing source with the protocol string', async () => {
    const { rename } = setup();
    expect(await rename('/memories/nope.md', '/memories/x.md')).toEqual({
      content: 'Error: The path /memories/nope.md does not exist',
      isError: true,
    });
  });

  it('refuses to move a directory into itself', async () => {
    const { store, rename } = setup();
    await store.write('dir/a.md', 'a', { mode: 'create' });
    expect(await rename('/memories/dir', '/memories/dir/inner')).toEqual({
      content: 'Error: Cannot move the directory /memories/dir into itself (/memories/dir/inner).',
      isError: true,
    });
    expect(await store.read('dir/a.md')).toBe('a');
  });

  it.each(['/memories', '/memories/', '/memories/.', '//memories/'])(
    'refuses to rename the root spelled %j',
    async (path) => {
      const { store, rename } = setup();
      await store.write('a.md', 'a', { mode: 'create' });
      expect(await rename(path, '/memories/elsewhere')).toEqual({
        content: 'Error: Cannot rename the /memories directory itself',
        isError: true,
      });
    },
  );

  it('refuses the root as destination, since it always exists', async () => {
    const { store, rename } = setup();
    await store.write('a.md', 'a', { mode: 'create' });
    expect(await rename('/memories/a.md', '/memories/')).toEqual({
      content: 'Error: The destination /memories already exists',
      isError: true,
    });
  });

  it('refuses a destination outside the root', async () => {
    const { store, rename } = setup();
    await store.write('a.md', 'a', { mode: 'create' });
    const result = await rename('/memories/a.md', '/memoriesX/a.md');
    expect(result.isError).toBe(true);
    expect(result.content).toContain('outside the memory directory');
    expect(await store.read('a.md')).toBe('a');
  });

  it('two concurrent renames onto one destination have exactly one winner', async () => {
    const { store, rename } = setup();
    await store.write('one.md', '1', { mode: 'create' });
    await store.write('two.md', '2', { mode: 'create' });
    const results = await Promise.all([
      rename('/memories/one.md', '/memories/target.md'),
      rename('/memories/two.md', '/memories/target.md'),
    ]);
    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    expect(results.filter((result) => result.isError)[0]!.content).toBe(
      'Error: The destination /memories/target.md already exists',
    );
    const survivors = (await store.list('', { depth: 1 })).map((entry) => entry.path);
    expect(survivors).toHaveLength(2);
    expect(survivors).toContain('target.md');
  });
});
