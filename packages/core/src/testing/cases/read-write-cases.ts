import { expect } from 'vitest';
import { expectStoreError, seed, type ConformanceGroup } from '../harness.js';

/** read, stat and write: create vs overwrite, parents, the root. */
export const readWriteCases: ConformanceGroup = {
  name: 'read, stat and write',
  cases: [
    {
      name: 'read and stat return null for a missing path',
      run: async (store) => {
        expect(await store.read('missing.md')).toBeNull();
        expect(await store.stat('missing.md')).toBeNull();
        expect(await store.read('no/such/dir/file.md')).toBeNull();
        expect(await store.stat('no/such/dir')).toBeNull();
      },
    },
    {
      name: 'the root always exists as a directory, even when empty',
      run: async (store) => {
        const root = await store.stat('');
        expect(root?.kind).toBe('directory');
        expect(await store.list('', { depth: 2 })).toEqual([]);
        await seed(store, { 'a.md': 'x' });
        await store.delete('a.md');
        expect((await store.stat(''))?.kind).toBe('directory');
        expect(await store.list('', { depth: 2 })).toEqual([]);
      },
    },
    {
      name: 'write in create mode creates a file that read returns',
      run: async (store) => {
        await store.write('notes.md', 'hello\nworld\n', { mode: 'create' });
        expect(await store.read('notes.md')).toBe('hello\nworld\n');
      },
    },
    {
      name: 'write in create mode refuses an existing file with exists and keeps its content',
      run: async (store) => {
        await seed(store, { 'notes.md': 'first' });
        await expectStoreError(store.write('notes.md', 'second', { mode: 'create' }), 'exists');
        expect(await store.read('notes.md')).toBe('first');
      },
    },
    {
      name: 'write in create mode refuses an existing directory with exists',
      run: async (store) => {
        await seed(store, { 'dir/a.md': 'a' });
        await expectStoreError(store.write('dir', 'x', { mode: 'create' }), 'exists');
        expect((await store.stat('dir'))?.kind).toBe('directory');
        expect(await store.read('dir/a.md')).toBe('a');
      },
    },
    {
      name: 'writes to the root are refused: create with exists, overwrite with is_directory',
      run: async (store) => {
        await expectStoreError(store.write('', 'x', { mode: 'create' }), 'exists');
        await expectStoreError(store.write('', 'x', { mode: 'overwrite' }), 'is_directory');
        await expectStoreError(
          store.edit('', () => 'x'),
          'is_directory',
        );
        expect((await store.stat(''))?.kind).toBe('directory');
      },
    },
    {
      name: 'write in overwrite mode replaces a file',
      run: async (store) => {
        await seed(store, { 'notes.md': 'first version, longer' });
        await store.write('notes.md', 'second', { mode: 'overwrite' });
        expect(await store.read('notes.md')).toBe('second');
        expect((await store.stat('notes.md'))?.size).toBe(6);
      },
    },
    {
      name: 'write in overwrite mode creates a missing file',
      run: async (store) => {
        await store.write('new.md', 'fresh', { mode: 'overwrite' });
        expect(await store.read('new.md')).toBe('fresh');
      },
    },
    {
      name: 'write in overwrite mode refuses a directory with is_directory',
      run: async (store) => {
        await seed(store, { 'dir/a.md': 'a' });
        await expectStoreError(store.write('dir', 'x', { mode: 'overwrite' }), 'is_directory');
        expect((await store.stat('dir'))?.kind).toBe('directory');
        expect(await store.read('dir/a.md')).toBe('a');
      },
    },
    {
      name: 'write creates every missing parent directory',
      run: async (store) => {
        await store.write('a/b/c/d.md', 'deep', { mode: 'create' });
        for (const directory of ['a', 'a/b', 'a/b/c']) {
          expect((await store.stat(directory))?.kind).toBe('directory');
        }
        expect(await store.read('a/b/c/d.md')).toBe('deep');
      },
    },
    {
      name: 'write below a file refuses with not_a_directory and changes nothing',
      run: async (store) => {
        await seed(store, { 'file.md': 'content' });
        await expectStoreError(
          store.write('file.md/child.md', 'x', { mode: 'create' }),
          'not_a_directory',
        );
        await expectStoreError(
          store.write('file.md/deeper/child.md', 'x', { mode: 'overwrite' }),
          'not_a_directory',
        );
        expect(await store.read('file.md')).toBe('content');
        expect(await store.usage()).toEqual({ bytes: 7, files: 1 });
      },
    },
    {
      name: 'read of a directory throws is_directory',
      run: async (store) => {
        await seed(store, { 'dir/a.md': 'a' });
        await expectStoreError(store.read('dir'), 'is_directory');
        await expectStoreError(store.read(''), 'is_directory');
      },
    },
    {
      name: 'stat reports kind, UTF-8 byte size and a recent modifiedAt',
      run: async (store) => {
        const before = Date.now();
        await seed(store, { 'dir/caf\u00e9.md': 'caf\u00e9 \u2615' });
        const file = await store.stat('dir/caf\u00e9.md');
        expect(file?.kind).toBe('file');
        expect(file?.size).toBe(9);
        // Generous window: a networked backend may stamp with its own clock.
        expect(file?.modifiedAt).toBeGreaterThan(before - 60_000);
        expect(file?.modifiedAt).toBeLessThan(Date.now() + 60_000);
        const directory = await store.stat('dir');
        expect(directory).toMatchObject({ kind: 'directory', size: 4096 });
        expect(Number.isFinite(directory?.modifiedAt)).toBe(true);
      },
    },
    {
      name: 'an empty file reads back as an empty string, not null',
      run: async (store) => {
        await store.write('empty.md', '', { mode: 'create' });
        expect(await store.read('empty.md')).toBe('');
        expect(await store.stat('empty.md')).toMatchObject({ kind: 'file', size: 0 });
        expect(await store.usage()).toEqual({ bytes: 0, files: 1 });
      },
    },
    {
      name: 'content round-trips byte for byte (CRLF, trailing newlines, tabs, long lines)',
      run: async (store) => {
        const contents = {
          'crlf.md': 'one\r\ntwo\r\n',
          'trailing.md': 'text\n\n\n',
          'no-newline.md': 'no newline at end',
          'tabs.md': '\tindented\t\tcells\n  spaces  \n',
          'long.md': `${'x'.repeat(100_000)}\n${'y'.repeat(10)}`,
          'json.json': JSON.stringify({ a: [1, 2, { b: 'c"d' }] }, null, 2),
          'dollars.md': '$& $1 $$ $` \\ \\n',
        };
        await seed(store, contents);
        for (const [path, content] of Object.entries(contents)) {
          expect(await store.read(path)).toBe(content);
        }
      },
    },
    {
      name: 'files and directories whose names share a prefix stay separate',
      run: async (store) => {
        await seed(store, {
          'a/inner.md': '1',
          'a.md': '2',
          'ab/inner.md': '3',
          'a-b.md': '4',
          'a b.md': '5',
        });
        expect(await store.read('a/inner.md')).toBe('1');
        expect(await store.read('a.md')).toBe('2');
        expect(await store.read('ab/inner.md')).toBe('3');
        expect(await store.read('a-b.md')).toBe('4');
        expect(await store.read('a b.md')).toBe('5');
        expect(await store.stat('a/inner')).toBeNull();
        expect(await store.stat('a/inner.m')).toBeNull();
      },
    },
    {
      name: 'a deleted directory can become a file and a deleted file a directory',
      run: async (store) => {
        await seed(store, { 'dir/a.md': 'a', 'file.md': 'f' });
        await store.delete('dir');
        await store.write('dir', 'now a file', { mode: 'create' });
        await store.delete('file.md');
        await store.write('file.md/inner.md', 'now a directory', { mode: 'create' });
        expect(await store.read('dir')).toBe('now a file');
        expect((await store.stat('file.md'))?.kind).toBe('directory');
        expect(await store.read('file.md/inner.md')).toBe('now a directory');
        expect(await store.usage()).toEqual({ bytes: 25, files: 2 });
      },
    },
  ],
};
