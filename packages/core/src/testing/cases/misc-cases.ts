import { expect } from 'vitest';
import { listPaths, seed, type ConformanceGroup } from '../harness.js';

/** usage, unicode, close. */
export const miscCases: ConformanceGroup = {
  name: 'usage, unicode and lifecycle',
  cases: [
    {
      name: 'usage counts files and UTF-8 bytes, not directories',
      run: async (store) => {
        expect(await store.usage()).toEqual({ bytes: 0, files: 0 });
        await seed(store, {
          'a.md': 'abc',
          'dir/sub/b.md': '\u00e9\u00e9',
          'dir/c.md': '\u{1F600}',
        });
        expect(await store.usage()).toEqual({ bytes: 3 + 4 + 4, files: 3 });
        await store.write('a.md', 'a', { mode: 'overwrite' });
        expect(await store.usage()).toEqual({ bytes: 1 + 4 + 4, files: 3 });
        await store.delete('dir');
        expect(await store.usage()).toEqual({ bytes: 1, files: 1 });
      },
    },
    {
      name: 'unicode names and content round-trip through write, list, rename and delete',
      run: async (store) => {
        const files = {
          'na\u00efve/\u65e5\u672c\u8a9e.md': '\u3053\u3093\u306b\u3061\u306f\n',
          '\u{1F4DD} notes/\u{1F600}.md': 'emoji \u{1F680}\n',
          'combining/e\u0301.md': 'e + combining acute',
          'rtl/\u05e9\u05dc\u05d5\u05dd.md': '\u05e9\u05dc\u05d5\u05dd',
        };
        await seed(store, files);
        for (const [path, content] of Object.entries(files)) {
          expect(await store.read(path)).toBe(content);
        }
        // A precomposed name is a different path from its decomposed spelling: no normalisation.
        expect(await store.read('combining/\u00e9.md')).toBeNull();
        expect(await listPaths(store, '\u{1F4DD} notes', 1)).toEqual([
          '\u{1F4DD} notes/\u{1F600}.md',
        ]);
        await store.rename('na\u00efve', '\u00fcber');
        expect(await store.read('\u00fcber/\u65e5\u672c\u8a9e.md')).toBe(
          '\u3053\u3093\u306b\u3061\u306f\n',
        );
        await store.delete('\u{1F4DD} notes');
        expect(await store.stat('\u{1F4DD} notes/\u{1F600}.md')).toBeNull();
      },
    },
    {
      name: 'names with spaces, dots, dashes and quotes are ordinary names',
      run: async (store) => {
        const files = {
          'my notes/file name.md': '1',
          'v1.2.3/release-notes.md': '2',
          'it\'s/"quoted".md': '3',
          'x..y/a': '4',
          '...': '5',
        };
        await seed(store, files);
        for (const [path, content] of Object.entries(files)) {
          expect(await store.read(path)).toBe(content);
        }
      },
    },
    {
      name: 'close is idempotent',
      run: async (store) => {
        await seed(store, { 'a.md': 'a' });
        await store.close();
        await store.close();
      },
    },
  ],
};
