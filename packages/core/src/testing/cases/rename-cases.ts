import { expect } from 'vitest';
import { expectStoreError, listPaths, seed, snapshot, type ConformanceGroup } from '../harness.js';

/** rename: files, whole directories, never overwriting, never into itself. */
export const renameCases: ConformanceGroup = {
  name: 'rename',
  cases: [
    {
      name: 'rename moves a file and keeps its content',
      run: async (store) => {
        await seed(store, { 'old.md': 'content' });
        await store.rename('old.md', 'new.md');
        expect(await store.read('old.md')).toBeNull();
        expect(await store.read('new.md')).toBe('content');
        expect(await store.usage()).toEqual({ bytes: 7, files: 1 });
      },
    },
    {
      name: 'rename moves a directory with all its descendants and spares prefix siblings',
      run: async (store) => {
        await seed(store, {
          'src/a.md': 'a',
          'src/sub/b.md': 'b',
          'src/sub/deeper/c.md': 'c',
          'src.md': 'sibling',
          'srcs/d.md': 'prefix sibling',
        });
        await store.rename('src', 'moved/dst');
        expect(await store.stat('src')).toBeNull();
        expect(await store.read('src/sub/b.md')).toBeNull();
        expect(await store.read('moved/dst/a.md')).toBe('a');
        expect(await store.read('moved/dst/sub/b.md')).toBe('b');
        expect(await store.read('moved/dst/sub/deeper/c.md')).toBe('c');
        expect(await listPaths(store, '', 10)).toEqual([
          'moved',
          'moved/dst',
          'moved/dst/a.md',
          'moved/dst/sub',
          'moved/dst/sub/b.md',
          'moved/dst/sub/deeper',
          'moved/dst/sub/deeper/c.md',
          'src.md',
          'srcs',
          'srcs/d.md',
        ]);
        expect(await store.usage()).toEqual({ bytes: 24, files: 5 });
      },
    },
    {
      name: 'rename moves an empty directory',
      run: async (store) => {
        await seed(store, { 'empty/x.md': 'x' });
        await store.delete('empty/x.md');
        await store.rename('empty', 'still-empty');
        expect(await store.stat('empty')).toBeNull();
        expect((await store.stat('still-empty'))?.kind).toBe('directory');
      },
    },
    {
      name: 'rename creates missing parents of the destination',
      run: async (store) => {
        await seed(store, { 'a.md': 'a' });
        await store.rename('a.md', 'x/y/z/a.md');
        expect((await store.stat('x/y'))?.kind).toBe('directory');
        expect(await store.read('x/y/z/a.md')).toBe('a');
      },
    },
    {
      name: 'rename never overwrites an existing file or directory',
      run: async (store) => {
        await seed(store, { 'a.md': 'a', 'b.md': 'b', 'dir/c.md': 'c', 'other/d.md': 'd' });
        const before = await snapshot(store);
        await expectStoreError(store.rename('a.md', 'b.md'), 'exists');
        await expectStoreError(store.rename('a.md', 'dir'), 'exists');
        await expectStoreError(store.rename('dir', 'b.md'), 'exists');
        await expectStoreError(store.rename('dir', 'other'), 'exists');
        expect(await snapshot(store)).toEqual(before);
      },
    },
    {
      name: 'rename onto an empty directory is refused with exists',
      run: async (store) => {
        await seed(store, { 'src/a.md': 'a', 'empty/x.md': 'x' });
        await store.delete('empty/x.md');
        const before = await snapshot(store);
        await expectStoreError(store.rename('src', 'empty'), 'exists');
        await expectStoreError(store.rename('src/a.md', 'empty'), 'exists');
        expect(await snapshot(store)).toEqual(before);
      },
    },
    {
      name: 'rename of a path onto itself is refused with exists',
      run: async (store) => {
        await seed(store, { 'a.md': 'a', 'dir/b.md': 'b' });
        await expectStoreError(store.rename('a.md', 'a.md'), 'exists');
        await expectStoreError(store.rename('dir', 'dir'), 'exists');
        expect(await store.read('a.md')).toBe('a');
        expect(await store.read('dir/b.md')).toBe('b');
      },
    },
    {
      name: 'rename of a missing source throws not_found',
      run: async (store) => {
        await expectStoreError(store.rename('missing.md', 'new.md'), 'not_found');
        expect(await store.stat('new.md')).toBeNull();
      },
    },
    {
      name: 'rename of a directory into its own subtree throws into_itself',
      run: async (store) => {
        await seed(store, { 'dir/a.md': 'a', 'dir/sub/b.md': 'b' });
        const before = await snapshot(store);
        await expectStoreError(store.rename('dir', 'dir/inner'), 'into_itself');
        await expectStoreError(store.rename('dir', 'dir/sub/new'), 'into_itself');
        expect(await snapshot(store)).toEqual(before);
        // A prefix sibling is not "inside".
        await store.rename('dir', 'dir2');
        expect(await store.read('dir2/sub/b.md')).toBe('b');
      },
    },
    {
      name: 'rename of the root or onto the root throws invalid_path',
      run: async (store) => {
        await seed(store, { 'a.md': 'a' });
        const before = await snapshot(store);
        await expectStoreError(store.rename('', 'elsewhere'), 'invalid_path');
        await expectStoreError(store.rename('a.md', ''), 'invalid_path');
        expect(await snapshot(store)).toEqual(before);
      },
    },
    {
      name: 'rename to a path below a file throws not_a_directory',
      run: async (store) => {
        await seed(store, { 'a.md': 'a', 'file.md': 'f' });
        await expectStoreError(store.rename('a.md', 'file.md/a.md'), 'not_a_directory');
        expect(await store.read('a.md')).toBe('a');
        expect(await store.read('file.md')).toBe('f');
      },
    },
    {
      name: 'a renamed file can be recreated at its old path',
      run: async (store) => {
        await seed(store, { 'dir/a.md': 'first' });
        await store.rename('dir', 'archive');
        await store.write('dir/a.md', 'second', { mode: 'create' });
        expect(await store.read('dir/a.md')).toBe('second');
        expect(await store.read('archive/a.md')).toBe('first');
      },
    },
  ],
};
