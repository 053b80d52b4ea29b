import { expect } from 'vitest';
import { expectStoreError, listPaths, seed, snapshot, type ConformanceGroup } from '../harness.js';

/** delete: files, whole directories, the root. */
export const deleteCases: ConformanceGroup = {
  name: 'delete',
  cases: [
    {
      name: 'delete removes a file and nothing else',
      run: async (store) => {
        await seed(store, { 'a.md': 'a', 'b.md': 'b' });
        await store.delete('a.md');
        expect(await store.read('a.md')).toBeNull();
        expect(await store.stat('a.md')).toBeNull();
        expect(await store.read('b.md')).toBe('b');
      },
    },
    {
      name: 'delete of a directory removes everything below it and spares prefix siblings',
      run: async (store) => {
        await seed(store, {
          'dir/a.md': 'a',
          'dir/sub/b.md': 'b',
          'dir/sub/deeper/c.md': 'c',
          'dir.md': 'sibling file',
          'dirt/d.md': 'prefix sibling',
          'dir-2/e.md': 'prefix sibling',
        });
        await store.delete('dir');
        expect(await store.stat('dir')).toBeNull();
        expect(await store.stat('dir/sub/deeper')).toBeNull();
        expect(await store.read('dir/sub/deeper/c.md')).toBeNull();
        expect(await listPaths(store, '', 2)).toEqual([
          'dir-2',
          'dir-2/e.md',
          'dir.md',
          'dirt',
          'dirt/d.md',
        ]);
        expect(await store.usage()).toEqual({ bytes: 40, files: 3 });
      },
    },
    {
      name: 'delete of an empty directory removes it',
      run: async (store) => {
        await seed(store, { 'dir/a.md': 'a' });
        await store.delete('dir/a.md');
        await store.delete('dir');
        expect(await store.stat('dir')).toBeNull();
      },
    },
    {
      name: 'delete of a missing path throws not_found',
      run: async (store) => {
        await seed(store, { 'file.md': 'x' });
        await expectStoreError(store.delete('missing.md'), 'not_found');
        await expectStoreError(store.delete('file.md/below'), 'not_found');
      },
    },
    {
      name: 'delete of the root throws invalid_path and keeps everything',
      run: async (store) => {
        await seed(store, { 'a.md': 'a', 'dir/b.md': 'b' });
        const before = await snapshot(store);
        await expectStoreError(store.delete(''), 'invalid_path');
        expect(await snapshot(store)).toEqual(before);
      },
    },
  ],
};
