import { describe, expect, it } from 'vitest';
import { createMemoryTool } from '../memory-tool.js';
import type { MemoryToolLimits } from '../memory-tool-options.js';
import { createInMemoryStore } from '../stores/in-memory-store.js';

async function setup(content: string, limits: Partial<MemoryToolLimits> = {}) {
  const store = createInMemoryStore();
  await store.write('f.md', content, { mode: 'create' });
  const tool = createMemoryTool({ store, limits });
  const replace = (old_str: unknown, new_str?: unknown) =>
    tool.execute(
      new_str === undefined
        ? { command: 'str_replace', path: '/memories/f.md', old_str }
        : { command: 'str_replace', path: '/memories/f.md', old_str, new_str },
    );
  return { store, tool, replace, read: () => store.read('f.md') };
}

const EDITED =
  'The memory file has been edited. Here is the snippet showing the change (with line numbers):';

describe('str_replace', () => {
  it('replaces a unique occurrence and shows the edited region with two lines of context', async () => {
    const { replace, read } = await setup('l1\nl2\nl3\nl4\nl5\nl6\nl7\n');
    expect(await replace('l4', 'four')).toEqual({
      content: [
        EDITED,
        '     2\tl2',
        '     3\tl3',
        '     4\tfour',
        '     5\tl5',
        '     6\tl6',
      ].join('\n'),
      isError: false,
    });
    expect(await read()).toBe('l1\nl2\nl3\nfour\nl5\nl6\nl7\n');
  });

  it('matches a multi-line old_str on the whole text and shows the whole new region', async () => {
    const features =
      '[\n  {\n    "id": "F1",\n    "passes": false\n  },\n  {\n    "id": "F2",\n    "passes": false\n  }\n]\n';
    const { replace, read } = await setup(features);
    const result = await replace(
      '"id": "F2",\n    "passes": false',
      '"id": "F2",\n    "passes": true',
    );
    expect(result.isError).toBe(false);
    expect(await read()).toBe(
      features.replace('"F2",\n    "passes": false', '"F2",\n    "passes": true'),
    );
    expect(result.content.split('\n').slice(1)).toEqual([
      '     5\t  },',
      '     6\t  {',
      '     7\t    "id": "F2",',
      '     8\t    "passes": true',
      '     9\t  }',
      '    10\t]',
    ]);
  });

  it('counts two occurrences on one line and reports the line of each', async () => {
    const { replace, read } = await setup('a\nfoo foo\nb\nfoo\n');
    expect(await replace('foo', 'bar')).toEqual({
      content:
        'No replacement was performed. Multiple occurrences of old_str `foo` in lines: 2, 2, 4. Please ensure it is unique',
      isError: true,
    });
    expect(await read()).toBe('a\nfoo foo\nb\nfoo\n');
  });

  it('counts multi-line occurrences by the line where each starts', async () => {
    const { replace } = await setup('x\ny\nx\ny\n');
    expect((await replace('x\ny', 'z')).content).toContain('in lines: 1, 3.');
  });

  it('counts overlapping occurrences as ambiguous', async () => {
    const { replace } = await setup('aaa');
    expect((await replace('aa', 'b')).content).toContain('in lines: 1, 1.');
  });

  it('reports an old_str that does not appear verbatim', async () => {
    const { replace } = await setup('hello');
    expect(await replace('Hello', 'x')).toEqual({
      content:
        'No replacement was performed, old_str `Hello` did not appear verbatim in /memories/f.md.',
      isError: true,
    });
  });

  it('inserts $&, $1, $$ and $` literally', async () => {
    const { replace, read } = await setup('price: X');
    await replace('X', "$& $1 $$ $` $'");
    expect(await read()).toBe("price: $& $1 $$ $` $'");
  });

  it('deletes old_str when new_str is omitted (or null)', async () => {
    const { replace, read, tool } = await setup('keep remove keep');
    expect((await replace(' remove')).isError).toBe(false);
    expect(await read()).toBe('keep keep');
    await tool.execute({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: ' keep',
      new_str: null,
    });
    expect(await read()).toBe('keep');
  });

  it('refuses an empty old_str', async () => {
    const { replace, read } = await setup('abc');
    const result = await replace('', 'x');
    expect(result.isError).toBe(true);
    expect(result.content).toContain('old_str is empty');
    expect(await read()).toBe('abc');
  });

  it('matches LF old_str in a CRLF file and keeps the file CRLF', async () => {
    const { replace, read } = await setup('a\r\nb\r\nc\r\n');
    expect((await replace('a\nb', 'x\ny')).isError).toBe(false);
    expect(await read()).toBe('x\r\ny\r\nc\r\n');
  });

  it('answers a missing file or a directory with the protocol string', async () => {
    const { tool, store } = await setup('x');
    await store.write('dir/a.md', 'x', { mode: 'create' });
    for (const path of ['/memories/missing.md', '/memories/dir']) {
      expect(
        await tool.execute({ command: 'str_replace', path, old_str: 'x', new_str: 'y' }),
      ).toEqual({
        content: `Error: The path ${path} does not exist. Please provide a valid path.`,
        isError: true,
      });
    }
  });

  it('refuses a result over maxFileBytes and changes nothing', async () => {
    const { replace, read } = await setup('small', { maxFileBytes: 8 });
    const result = await replace('small', 'much bigger');
    expect(result.content).toBe(
      'Error: File /memories/f.md would be 11 bytes, over the limit of 8 bytes per file. Nothing was changed.',
    );
    expect(await read()).toBe('small');
  });

  it('concurrent str_replace calls on different parts of one file are all kept', async () => {
    const lines = Array.from({ length: 20 }, (_, index) => `item ${index}: todo`);
    const { tool, read } = await setup(`${lines.join('\n')}\n`);
    const results = await Promise.all(
      lines.map((_, index) =>
        tool.execute({
          command: 'str_replace',
          path: '/memories/f.md',
          old_str: `item ${index}: todo`,
          new_str: `item ${index}: done`,
        }),
      ),
    );
    expect(results.every((result) => !result.isError)).toBe(true);
    expect(await read()).toBe(`${lines.map((line) => line.replace('todo', 'done')).join('\n')}\n`);
  });
});
