import { describe, expect, it } from 'vitest';
import { createMemoryTool } from '../memory-tool.js';
import type { MemoryToolLimits } from '../memory-tool-options.js';
import { createInMemoryStore } from '../stores/in-memory-store.js';

function setup(limits: Partial<MemoryToolLimits> = {}) {
  const store = createInMemoryStore();
  const tool = createMemoryTool({ store, limits });
  return { store, tool };
}

describe('create', () => {
  it('creates a file and its missing parent directories', async () => {
    const { store, tool } = setup();
    expect(
      await tool.execute({ command: 'create', path: '/memories/a/b/c.md', file_text: 'hi\n' }),
    ).toEqual({ content: 'File created successfully at: /memories/a/b/c.md', isError: false });
    expect(await store.read('a/b/c.md')).toBe('hi\n');
    expect((await store.stat('a/b'))?.kind).toBe('directory');
  });

  it('reports the canonical path whatever the spelling', async () => {
    const { tool } = setup();
    const result = await tool.execute({
      command: 'create',
      path: '/memories//./x.md',
      file_text: '',
    });
    expect(result.content).toBe('File created successfully at: /memories/x.md');
  });

  it('never overwrites: an existing file is an error and keeps its content', async () => {
    const { store, tool } = setup();
    await store.write('a.md', 'original', { mode: 'create' });
    expect(
      await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'new' }),
    ).toEqual({ content: 'Error: File /memories/a.md already exists', isError: true });
    expect(await store.read('a.md')).toBe('original');
  });

  it('refuses to create over a directory or the root', async () => {
    const { store, tool } = setup();
    await store.write('dir/a.md', 'x', { mode: 'create' });
    expect(
      await tool.execute({ command: 'create', path: '/memories/dir', file_text: 'x' }),
    ).toEqual({
      content: 'Error: File /memories/dir already exists',
      isError: true,
    });
    expect(await tool.execute({ command: 'create', path: '/memories/', file_text: 'x' })).toEqual({
      content: 'Error: File /memories already exists',
      isError: true,
    });
  });

  it('refuses a file below a file', async () => {
    const { store, tool } = setup();
    await store.write('a.md', 'x', { mode: 'create' });
    const result = await tool.execute({
      command: 'create',
      path: '/memories/a.md/b.md',
      file_text: 'x',
    });
    expect(result).toEqual({
      content:
        'Error: Cannot create /memories/a.md/b.md: a parent of it is a file, not a directory.',
      isError: true,
    });
  });

  it('two concurrent creates of one path have exactly one winner', async () => {
    const { store, tool } = setup();
    const results = await Promise.all(
      ['first', 'second'].map((file_text) =>
        tool.execute({ command: 'create', path: '/memories/race.md', file_text }),
      ),
    );
    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    expect(['first', 'second']).toContain(await store.read('race.md'));
  });

  it('refuses a file over maxFileBytes and writes nothing', async () => {
    const { store, tool } = setup({ maxFileBytes: 10 });
    expect(
      await tool.execute({ command: 'create', path: '/memories/big.md', file_text: 'ü'.repeat(6) }),
    ).toEqual({
      content:
        'Error: File /memories/big.md would be 12 bytes, over the limit of 10 bytes per file. Nothing was changed.',
      isError: true,
    });
    expect(await store.stat('big.md')).toBeNull();
  });

  it('refuses a file beyond maxFiles and writes nothing', async () => {
    const { store, tool } = setup({ maxFiles: 2 });
    for (const name of ['a', 'b']) {
      await tool.execute({ command: 'create', path: `/memories/${name}.md`, file_text: 'x' });
    }
    const result = await tool.execute({
      command: 'create',
      path: '/memories/c.md',
      file_text: 'x',
    });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('would hold 3 files, over the limit of 2 files');
    expect(await store.usage()).toEqual({ bytes: 2, files: 2 });
  });

  it('refuses a file beyond maxTotalBytes and writes nothing', async () => {
    const { store, tool } = setup({ maxTotalBytes: 10 });
    await tool.execute({ command: 'create', path: '/memories/a.md', file_text: '123456' });
    const result = await tool.execute({
      command: 'create',
      path: '/memories/b.md',
      file_text: '12345',
    });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('would hold 11 bytes, over the limit of 10 bytes');
    expect(await store.stat('b.md')).toBeNull();
  });
});

describe('create on an existing path answers "already exists" before anything else', () => {
  it('a beforeWrite hook is not consulted for a create that cannot happen', async () => {
    const store = createInMemoryStore();
    await store.write('a.md', 'original', { mode: 'create' });
    let calls = 0;
    const tool = createMemoryTool({
      store,
      hooks: {
        beforeWrite: () => {
          calls += 1;
          return undefined;
        },
      },
    });
    expect(
      await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'x' }),
    ).toEqual({ content: 'Error: File /memories/a.md already exists', isError: true });
    expect(calls).toBe(0);
  });
});
