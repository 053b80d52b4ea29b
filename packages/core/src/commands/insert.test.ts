import { describe, expect, it } from 'vitest';
import { createMemoryTool } from '../memory-tool.js';
import { createInMemoryStore } from '../stores/in-memory-store.js';

async function setup(content: string) {
  const store = createInMemoryStore();
  await store.write('f.md', content, { mode: 'create' });
  const tool = createMemoryTool({ store });
  const insert = (insert_line: unknown, insert_text: unknown) =>
    tool.execute({ command: 'insert', path: '/memories/f.md', insert_line, insert_text });
  return { store, tool, insert, read: () => store.read('f.md') };
}

describe('insert', () => {
  it('inserts after insert_line and answers with the protocol string', async () => {
    const { insert, read } = await setup('a\nb\nc\n');
    expect(await insert(1, 'X')).toEqual({
      content: 'The file /memories/f.md has been edited.',
      isError: false,
    });
    expect(await read()).toBe('a\nX\nb\nc\n');
  });

  it('insert_line 0 inserts at the top', async () => {
    const { insert, read } = await setup('a\nb\n');
    await insert(0, 'top');
    expect(await read()).toBe('top\na\nb\n');
  });

  it('insert_line n_lines appends, keeping the final newline and adding no blank line', async () => {
    const { insert, read } = await setup('a\nb\n');
    await insert(2, 'end');
    expect(await read()).toBe('a\nb\nend\n');
  });

  it('appending to a file without a final newline does not add one', async () => {
    const { insert, read } = await setup('a\nb');
    await insert(2, 'end');
    expect(await read()).toBe('a\nb\nend');
  });

  it('treats one trailing newline of insert_text as its terminator, not a blank line', async () => {
    const { insert, read } = await setup('a\nb\n');
    await insert(1, 'x\ny\n');
    expect(await read()).toBe('a\nx\ny\nb\n');
  });

  it('inserts into an empty file', async () => {
    const { insert, read } = await setup('');
    await insert(0, 'first\n');
    expect(await read()).toBe('first\n');
  });

  it('keeps a CRLF file CRLF, whatever line endings insert_text uses', async () => {
    const { insert, read } = await setup('a\r\nb\r\n');
    await insert(1, 'x\ny\r\nz\n');
    expect(await read()).toBe('a\r\nx\r\ny\r\nz\r\nb\r\n');
  });

  it.each([-1, 3, 1.5, 99])('rejects insert_line %d with the range of the file', async (line) => {
    const { insert, read } = await setup('a\nb\n');
    expect(await insert(line, 'x')).toEqual({
      content: `Error: Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, 2]`,
      isError: true,
    });
    expect(await read()).toBe('a\nb\n');
  });

  it('rejects a mistyped insert_line naming the field', async () => {
    const { insert } = await setup('a\n');
    expect(await insert('1', 'x')).toEqual({
      content:
        'Error: Invalid input for memory command "insert": the field "insert_line" must be a number, got a string.',
      isError: true,
    });
  });

  it('answers a missing file or a directory with the protocol string', async () => {
    const { tool, store } = await setup('x');
    await store.write('dir/a.md', 'x', { mode: 'create' });
    for (const path of ['/memories/missing.md', '/memories/dir']) {
      expect(
        await tool.execute({ command: 'insert', path, insert_line: 0, insert_text: 'x' }),
      ).toEqual({
        content: `Error: The path ${path} does not exist`,
        isError: true,
      });
    }
  });

  it('50 parallel inserts on one file keep all 50 lines', async () => {
    const { insert, read } = await setup('header\n');
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, index) => insert(1, `line ${index}`)),
    );
    expect(results.every((result) => !result.isError)).toBe(true);
    const lines = (await read())!.split('\n');
    expect(lines[0]).toBe('header');
    expect(lines.at(-1)).toBe('');
    expect(new Set(lines.slice(1, -1))).toEqual(
      new Set(Array.from({ length: 50 }, (_, index) => `line ${index}`)),
    );
  });
});
