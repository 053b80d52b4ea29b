import { expect } from 'vitest';
import {
  byCodeUnits,
  expectStoreError,
  listPaths,
  seed,
  type ConformanceGroup,
} from '../harness.js';

const TREE = {
  'top.md': 'top',
  'docs/guide.md': 'guide',
  'docs/api/index.md': 'api',
  'docs/api/deep/leaf.md': 'leaf',
  'notes/today.md': 'today',
};

/** list: depth, order, hidden entries, sizes, errors. */
export const listCases: ConformanceGroup = {
  name: 'list',
  cases: [
    {
      name: 'list at depth 1 returns direct children with depth 1',
      run: async (store) => {
        await seed(store, TREE);
        const entries = await store.list('', { depth: 1 });
        expect(entries.map((entry) => [entry.path, entry.depth, entry.kind])).toEqual([
          ['docs', 1, 'directory'],
          ['notes', 1, 'directory'],
          ['top.md', 1, 'file'],
        ]);
      },
    },
    {
      name: 'list at depth 2 includes grandchildren and nothing deeper',
      run: async (store) => {
        await seed(store, TREE);
        const entries = await store.list('', { depth: 2 });
        expect(entries.map((entry) => [entry.path, entry.depth])).toEqual([
          ['docs', 1],
          ['docs/api', 2],
          ['docs/guide.md', 2],
          ['notes', 1],
          ['notes/today.md', 2],
          ['top.md', 1],
        ]);
        expect(await listPaths(store, '', 10)).toEqual([
          'docs',
          'docs/api',
          'docs/api/deep',
          'docs/api/deep/leaf.md',
          'docs/api/index.md',
          'docs/guide.md',
          'notes',
          'notes/today.md',
          'top.md',
        ]);
      },
    },
    {
      name: 'list of a subdirectory returns root-relative paths and depths relative to it',
      run: async (store) => {
        await seed(store, TREE);
        const entries = await store.list('docs', { depth: 2 });
        expect(entries.map((entry) => [entry.path, entry.depth])).toEqual([
          ['docs/api', 1],
          ['docs/api/deep', 2],
          ['docs/api/index.md', 2],
          ['docs/guide.md', 1],
        ]);
      },
    },
    {
      name: 'list is sorted by path in code-unit order, parents before children',
      run: async (store) => {
        const names = [
          'b.md',
          'B.md',
          'a',
          'a b',
          'a.txt',
          'a-c',
          'Z',
          '_x',
          '10.md',
          '9.md',
          '\u00e9.md',
        ];
        for (const name of names) {
          if (name === 'a') await seed(store, { 'a/child.md': 'c' });
          else await seed(store, { [name]: name });
        }
        const paths = await listPaths(store, '', 2);
        const expected = [...names, 'a/child.md'].sort(byCodeUnits);
        expect(paths).toEqual(expected);
        expect(paths.indexOf('a')).toBeLessThan(paths.indexOf('a/child.md'));
      },
    },
    {
      name: 'list sorts by UTF-16 code units, not by code points or UTF-8 bytes',
      run: async (store) => {
        // U+1F4DD (a surrogate pair, 0xD83D...) sorts before U+FF5A in code units but after it in
        // code points and UTF-8 bytes: backends that sort bytes must re-sort.
        await seed(store, { '\u{1F4DD}.md': 'memo', '\uFF5A.md': 'z', 'a.md': 'a' });
        expect(await listPaths(store, '', 1)).toEqual(['a.md', '\u{1F4DD}.md', '\uFF5A.md']);
      },
    },
    {
      name: 'list with skipHidden leaves out dot names and node_modules with everything below them',
      run: async (store) => {
        await seed(store, {
          '.hidden.md': 'h',
          '.config/settings.json': '{}',
          'node_modules/pkg/index.js': 'x',
          'visible/.secret.md': 's',
          'visible/node_modules/x.js': 'x',
          'visible/shown.md': 'v',
          'notnode_modules.md': 'n',
          'a.b.md': 'dot inside the name is fine',
        });
        expect(await listPaths(store, '', 3, true)).toEqual([
          'a.b.md',
          'notnode_modules.md',
          'visible',
          'visible/shown.md',
        ]);
        expect(await listPaths(store, '', 3, false)).toEqual([
          '.config',
          '.config/settings.json',
          '.hidden.md',
          'a.b.md',
          'node_modules',
          'node_modules/pkg',
          'node_modules/pkg/index.js',
          'notnode_modules.md',
          'visible',
          'visible/.secret.md',
          'visible/node_modules',
          'visible/node_modules/x.js',
          'visible/shown.md',
        ]);
        // Hidden entries stay reachable by path: skipHidden only shapes listings.
        expect(await store.read('.config/settings.json')).toBe('{}');
        expect(await listPaths(store, '.config', 1, true)).toEqual(['.config/settings.json']);
      },
    },
    {
      name: 'list reports file byte sizes and directory size 4096',
      run: async (store) => {
        await seed(store, { 'dir/one.md': '12345', 'dir/emoji.md': '\u{1F600}', 'two.md': '' });
        const entries = await store.list('', { depth: 2 });
        expect(entries.map((entry) => [entry.path, entry.kind, entry.size])).toEqual([
          ['dir', 'directory', 4096],
          ['dir/emoji.md', 'file', 4],
          ['dir/one.md', 'file', 5],
          ['two.md', 'file', 0],
        ]);
        for (const entry of entries) expect(Number.isFinite(entry.modifiedAt)).toBe(true);
      },
    },
    {
      name: 'list of a missing path throws not_found and of a file throws not_a_directory',
      run: async (store) => {
        await seed(store, { 'file.md': 'x' });
        await expectStoreError(store.list('missing', { depth: 1 }), 'not_found');
        await expectStoreError(store.list('file.md', { depth: 1 }), 'not_a_directory');
      },
    },
    {
      name: 'deleting the last file of a directory keeps the directory',
      run: async (store) => {
        await seed(store, { 'dir/only.md': 'x' });
        await store.delete('dir/only.md');
        expect((await store.stat('dir'))?.kind).toBe('directory');
        expect(await listPaths(store, '', 2)).toEqual(['dir']);
        expect(await store.list('dir', { depth: 1 })).toEqual([]);
        await store.write('dir/again.md', 'y', { mode: 'create' });
        expect(await store.read('dir/again.md')).toBe('y');
      },
    },
  ],
};
