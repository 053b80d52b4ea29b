import { describe, expect, it } from 'vitest';
import { createMemoryTool } from '../memory-tool.js';
import { createInMemoryStore } from '../stores/in-memory-store.js';

function setup() {
  const store = createInMemoryStore();
  return { store, tool: createMemoryTool({ store }) };
}

describe('delete', () => {
  it('deletes a file with the protocol string', async () => {
    const { store, tool } = setup();
    await store.write('a.md', 'x', { mode: 'create' });
    expect(await tool.execute({ command: 'delete', path: '/memories/a.md' })).toEqual({
      content: 'Successfully deleted /memories/a.md',
      isError: false,
    });
    expect(await store.stat('a.md')).toBeNull();
  });

  it('deletes a directory with everything below it', async () => {
    const { store, tool } = setup();
    await store.write('dir/a.md', 'x', { mode: 'create' });
    await store.write('dir/sub/b.md', 'x', { mode: 'create' });
    await store.write('dirx.md', 'keep', { mode: 'create' });
    expect((await tool.execute({ command: 'delete', path: '/memories/dir/' })).content).toBe(
      'Successfully deleted /memories/dir',
    );
    expect(await store.list('', { depth: 5 })).toMatchObject([{ path: 'dirx.md' }]);
  });

  it('answers a missing path with the protocol string', async () => {
    const { tool } = setup();
    expect(await tool.execute({ command: 'delete', path: '/memories/nope' })).toEqual({
      content: 'Error: The path /memories/nope does not exist',
      isError: true,
    });
  });

  it.each([
    '/memories',
    '/memories/',
    '/memories/.',
    '//memories',
    '/memories/./',
    '/memories/x/..',
  ])('refuses to delete the root spelled %j and deletes nothing', async (path) => {
    const { store, tool } = setup();
    await store.write('a.md', 'x', { mode: 'create' });
    const result = await tool.execute({ command: 'delete', path });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /^Error: (Cannot delete the \/memories directory itself|The path .* contains a '\.\.' segment)/,
    );
    expect(await store.read('a.md')).toBe('x');
  });
});
