import { describe, expect, it } from 'vitest';
import { createMemoryTool } from '../memory-tool.js';
import type { MemoryToolLimits } from '../memory-tool-options.js';
import { createInMemoryStore } from '../stores/in-memory-store.js';
import { compareTreeOrder } from './view.js';

function setup(limits: Partial<MemoryToolLimits> = {}) {
  const store = createInMemoryStore();
  const tool = createMemoryTool({ store, limits });
  return { store, tool };
}

const HEADER = (path: string) =>
  `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:`;

describe('view of a directory', () => {
  it('lists an empty root without error', async () => {
    const { tool } = setup();
    expect(await tool.execute({ command: 'view', path: '/memories' })).toEqual({
      content: `${HEADER('/memories')}\n4.0K\t/memories`,
      isError: false,
    });
  });

  it('prints the header, the directory itself first, sizes, trailing slashes, tree order', async () => {
    const { store, tool } = setup();
    await store.write('b.md', 'x'.repeat(1536), { mode: 'create' });
    await store.write('a/z.md', 'hello', { mode: 'create' });
    await store.write('a-b.md', 'x'.repeat(4096), { mode: 'create' });
    await store.write('a/m/deep.md', 'd', { mode: 'create' });
    const result = await tool.execute({ command: 'view', path: '/memories' });
    expect(result.content).toBe(
      [
        HEADER('/memories'),
        '4.0K\t/memories',
        '4.0K\t/memories/a/',
        '4.0K\t/memories/a/m/',
        '5B\t/memories/a/z.md',
        '4.0K\t/memories/a-b.md',
        '1.5K\t/memories/b.md',
      ].join('\n'),
    );
  });

  it('goes at most 2 levels deep', async () => {
    const { store, tool } = setup();
    await store.write('one/two/three/four.md', 'x', { mode: 'create' });
    const { content } = await tool.execute({ command: 'view', path: '/memories/' });
    expect(content).toContain('/memories/one/two/');
    expect(content).not.toContain('three');
  });

  it('excludes hidden entries and node_modules with everything below them', async () => {
    const { store, tool } = setup();
    await store.write('.secret', 'x', { mode: 'create' });
    await store.write('.git/config', 'x', { mode: 'create' });
    await store.write('node_modules/pkg.json', 'x', { mode: 'create' });
    await store.write('dir/.hidden.md', 'x', { mode: 'create' });
    await store.write('dir/visible.md', 'x', { mode: 'create' });
    const { content } = await tool.execute({ command: 'view', path: '/memories' });
    expect(content).toBe(
      [
        HEADER('/memories'),
        '4.0K\t/memories',
        '4.0K\t/memories/dir/',
        '1B\t/memories/dir/visible.md',
      ].join('\n'),
    );
  });

  it('treats /memories and /memories/ (and other spellings) as the same path', async () => {
    const { store, tool } = setup();
    await store.write('a.md', 'x', { mode: 'create' });
    const canonical = await tool.execute({ command: 'view', path: '/memories' });
    for (const path of ['/memories/', '/memories/.', '//memories//']) {
      expect(await tool.execute({ command: 'view', path })).toEqual(canonical);
    }
  });

  it('lists a subdirectory relative to itself, with view_range ignored', async () => {
    const { store, tool } = setup();
    await store.write('notes/a.md', 'x', { mode: 'create' });
    const result = await tool.execute({
      command: 'view',
      path: '/memories/notes/',
      view_range: [1, 2],
    });
    expect(result.content).toBe(
      [HEADER('/memories/notes'), '4.0K\t/memories/notes', '1B\t/memories/notes/a.md'].join('\n'),
    );
  });

  it('cuts a listing longer than maxViewChars with a final line saying what is left out', async () => {
    const { store, tool } = setup({ maxViewChars: 1_000 });
    for (let index = 0; index < 100; index++) {
      await store.write(`f${String(index).padStart(3, '0')}.md`, 'x', { mode: 'create' });
    }
    const { content, isError } = await tool.execute({ command: 'view', path: '/memories' });
    expect(isError).toBe(false);
    expect(content.length).toBeLessThanOrEqual(1_000);
    expect(content.split('\n').at(-1)).toMatch(
      /^\[Listing cut at 1,000 characters: \d+ more entries not shown\./,
    );
  });

  it('reports a missing path with the protocol string', async () => {
    const { tool } = setup();
    expect(await tool.execute({ command: 'view', path: '/memories/nope' })).toEqual({
      content: 'The path /memories/nope does not exist. Please provide a valid path.',
      isError: true,
    });
  });
});

describe('view of a file', () => {
  it('numbers lines right-aligned in 6 characters followed by a TAB', async () => {
    const { store, tool } = setup();
    await store.write('a.md', 'alpha\nbeta\n', { mode: 'create' });
    expect(await tool.execute({ command: 'view', path: '/memories/a.md' })).toEqual({
      content:
        "Here's the content of /memories/a.md with line numbers:\n     1\talpha\n     2\tbeta",
      isError: false,
    });
  });

  it('numbers line 123456 in the same six columns', async () => {
    const { store, tool } = setup();
    await store.write('big.md', 'x\n'.repeat(123_456), { mode: 'create' });
    const { content } = await tool.execute({
      command: 'view',
      path: '/memories/big.md',
      view_range: [123_456, -1],
    });
    expect(content.split('\n')[1]).toBe('123456\tx');
  });

  it('shows a view_range, end -1 meaning the end of the file', async () => {
    const { store, tool } = setup();
    await store.write('a.md', 'l1\nl2\nl3\nl4', { mode: 'create' });
    const range = async (view_range: number[]) =>
      (await tool.execute({ command: 'view', path: '/memories/a.md', view_range })).content
        .split('\n')
        .slice(1);
    expect(await range([2, 3])).toEqual(['     2\tl2', '     3\tl3']);
    expect(await range([3, -1])).toEqual(['     3\tl3', '     4\tl4']);
    expect(await range([4, 4])).toEqual(['     4\tl4']);
  });

  const nonsense: Array<[number[] | unknown, string]> = [
    [[0, 2], 'Its first element `0` should be within the range of lines of the file: [1, 4]'],
    [[5, 5], 'Its first element `5` should be within the range of lines of the file: [1, 4]'],
    [[3, 2], 'Its second element `2` should be larger or equal than its first `3`'],
    [[1, 9], 'Its second element `9` should be smaller than or equal to the number of lines'],
    [[1.5, 2], 'It should be a list of two integers'],
    [[1], 'It should be a list of two integers'],
    [[1, 2, 3], 'It should be a list of two integers'],
    [[-1, -1], 'Its first element `-1` should be within the range'],
  ];

  it.each(nonsense)('rejects the nonsense view_range %j clearly', async (viewRange, message) => {
    const { store, tool } = setup();
    await store.write('a.md', 'l1\nl2\nl3\nl4', { mode: 'create' });
    const result = await tool.execute({
      command: 'view',
      path: '/memories/a.md',
      view_range: viewRange,
    });
    expect(result.isError).toBe(true);
    expect(result.content).toContain(message);
  });

  it('rejects a view_range that is not an array of numbers', async () => {
    const { store, tool } = setup();
    await store.write('a.md', 'l1', { mode: 'create' });
    const result = await tool.execute({
      command: 'view',
      path: '/memories/a.md',
      view_range: '1-2',
    });
    expect(result).toEqual({
      content:
        'Error: Invalid input for memory command "view": the field "view_range" must be an array, got a string.',
      isError: true,
    });
  });

  it('cuts a view longer than 16,000 characters and says how to page with view_range', async () => {
    const { store, tool } = setup();
    const lines = Array.from(
      { length: 1_000 },
      (_, index) => `line ${index + 1}: ${'y'.repeat(30)}`,
    );
    await store.write('long.md', lines.join('\n'), { mode: 'create' });
    const { content, isError } = await tool.execute({ command: 'view', path: '/memories/long.md' });
    expect(isError).toBe(false);
    expect(content.length).toBeLessThanOrEqual(16_000);
    const shown = content.split('\n');
    const hint = shown.at(-1)!;
    const match =
      /showing lines 1-(\d+) of 1000\. To read on, view this file again with view_range \[(\d+), (\d+)\]/.exec(
        hint,
      );
    expect(hint.startsWith('[Output cut at 16,000 characters')).toBe(true);
    expect(match).not.toBeNull();
    const lastShown = Number(match![1]);
    expect(shown.at(-2)).toBe(`${String(lastShown).padStart(6)}\t${lines[lastShown - 1]}`);
    expect(Number(match![2])).toBe(lastShown + 1);

    // Following the hint continues exactly where the first page stopped.
    const next = await tool.execute({
      command: 'view',
      path: '/memories/long.md',
      view_range: [Number(match![2]), Number(match![3])],
    });
    expect(next.content.split('\n')[1]).toBe(
      `${String(lastShown + 1).padStart(6)}\t${lines[lastShown]}`,
    );
  });

  it('shows the start of a single line longer than the view limit, never nothing', async () => {
    const { store, tool } = setup();
    await store.write('one-line.md', 'z'.repeat(50_000), { mode: 'create' });
    const { content, isError } = await tool.execute({
      command: 'view',
      path: '/memories/one-line.md',
    });
    expect(isError).toBe(false);
    expect(content.length).toBeLessThanOrEqual(16_000);
    expect(content.split('\n')[1]).toMatch(/^ {5}1\tzzzz/);
    expect(content).toContain('line 1 is longer than that and is shown only in part');
  });

  it('refuses a file of more than 999,999 lines with the protocol string', async () => {
    const { store, tool } = setup();
    await store.write('huge.md', '\n'.repeat(1_000_000), { mode: 'create' });
    expect(await tool.execute({ command: 'view', path: '/memories/huge.md' })).toEqual({
      content: 'File /memories/huge.md exceeds maximum line limit of 999,999 lines.',
      isError: true,
    });
    await store.write('ok.md', '\n'.repeat(999_999), { mode: 'create' });
    expect((await tool.execute({ command: 'view', path: '/memories/ok.md' })).isError).toBe(false);
  });

  it('shows a CRLF file without carriage returns', async () => {
    const { store, tool } = setup();
    await store.write('crlf.md', 'a\r\nb\r\n', { mode: 'create' });
    const { content } = await tool.execute({ command: 'view', path: '/memories/crlf.md' });
    expect(content.split('\n').slice(1)).toEqual(['     1\ta', '     2\tb']);
  });
});

describe('view of a directory: tree order without splitting paths', () => {
  const referenceOrder = (left: string, right: string): number => {
    const a = left.split('/');
    const b = right.split('/');
    for (let index = 0; index < Math.min(a.length, b.length); index++) {
      if (a[index] !== b[index]) return a[index]! < b[index]! ? -1 : 1;
    }
    return a.length - b.length;
  };

  it('compareTreeOrder agrees with a segment-by-segment comparison', () => {
    const names = ['a', 'a-b', 'a.md', 'a b', 'ab', 'a~', 'b', '!', 'é', '\u{1f600}', 'A'];
    const paths = names.flatMap((name) => [name, ...names.map((child) => `${name}/${child}`)]);
    for (const left of paths) {
      for (const right of paths) {
        expect(Math.sign(compareTreeOrder(left, right)), `${left} vs ${right}`).toBe(
          Math.sign(referenceOrder(left, right)),
        );
      }
    }
  });

  it('prints the same listing whatever order the store returns entries in', async () => {
    const { store, tool } = setup();
    for (const path of ['a/x.md', 'a-b/y.md', 'a.md', 'b/z.md', 'a/c/d.md']) {
      await store.write(path, 'x', { mode: 'create' });
    }
    const expected = await tool.execute({ command: 'view', path: '/memories' });
    const reversed = createMemoryTool({
      store: {
        read: (path) => store.read(path),
        stat: (path) => store.stat(path),
        write: (path, content, options) => store.write(path, content, options),
        edit: (path, transform, context) => store.edit(path, transform, context),
        list: async (path, options) => (await store.list(path, options)).reverse(),
        delete: (path, context) => store.delete(path, context),
        rename: (from, to, context) => store.rename(from, to, context),
        usage: () => store.usage(),
        close: () => store.close(),
      },
    });
    expect(await reversed.execute({ command: 'view', path: '/memories' })).toEqual(expected);
    expect(expected.content.split('\n').slice(2)).toEqual([
      '4.0K\t/memories/a/',
      '4.0K\t/memories/a/c/',
      '1B\t/memories/a/x.md',
      '4.0K\t/memories/a-b/',
      '1B\t/memories/a-b/y.md',
      '1B\t/memories/a.md',
      '4.0K\t/memories/b/',
      '1B\t/memories/b/z.md',
    ]);
  });
});
