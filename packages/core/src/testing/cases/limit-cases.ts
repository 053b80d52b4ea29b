import { expect } from 'vitest';
import { isStoreError } from '../../store.js';
import { expectStoreError, seed, snapshot, type ConformanceGroup } from '../harness.js';

/**
 * Limits: refused with quota_exceeded naming the limit and its value (the handler quotes both to
 * the model), and a refused call changes nothing.
 */
export const limitCases: ConformanceGroup = {
  name: 'limits',
  cases: [
    {
      name: 'maxFileBytes refuses an oversized create with quota_exceeded and changes nothing',
      limits: { maxFileBytes: 10 },
      run: async (store) => {
        await seed(store, { 'ok.md': '0123456789' });
        const before = await snapshot(store);
        const error = await expectStoreError(
          store.write('big.md', '01234567890', { mode: 'create' }),
          'quota_exceeded',
        );
        expect(error).toMatchObject({ limit: 'maxFileBytes', maximum: 10 });
        await expectStoreError(
          store.write('new/dir/big.md', 'x'.repeat(11), { mode: 'create' }),
          'quota_exceeded',
        );
        expect(await snapshot(store)).toEqual(before);
        expect(await store.stat('new')).toBeNull();
        expect(await store.usage()).toEqual({ bytes: 10, files: 1 });
      },
    },
    {
      name: 'maxFileBytes counts UTF-8 bytes, not characters',
      limits: { maxFileBytes: 5 },
      run: async (store) => {
        await store.write('ascii.md', 'hello', { mode: 'create' });
        const error = await expectStoreError(
          store.write('accent.md', 'h\u00e9llo', { mode: 'create' }),
          'quota_exceeded',
        );
        expect(error).toMatchObject({ limit: 'maxFileBytes', maximum: 5 });
        expect(await store.stat('accent.md')).toBeNull();
      },
    },
    {
      name: 'maxFileBytes refuses an oversized overwrite and edit and keeps the old content',
      limits: { maxFileBytes: 10 },
      run: async (store) => {
        await seed(store, { 'a.md': 'small' });
        await expectStoreError(
          store.write('a.md', 'x'.repeat(11), { mode: 'overwrite' }),
          'quota_exceeded',
        );
        const error = await expectStoreError(
          store.edit('a.md', (current) => `${current} and much more`),
          'quota_exceeded',
        );
        expect(error).toMatchObject({ limit: 'maxFileBytes', maximum: 10 });
        expect(await store.read('a.md')).toBe('small');
        expect(await store.usage()).toEqual({ bytes: 5, files: 1 });
      },
    },
    {
      name: 'maxTotalBytes refuses a write or edit that would exceed the total and changes nothing',
      limits: { maxTotalBytes: 20 },
      run: async (store) => {
        await seed(store, { 'a.md': '0123456789', 'b.md': '012345678' });
        const before = await snapshot(store);
        const created = await expectStoreError(
          store.write('c.md', '01', { mode: 'create' }),
          'quota_exceeded',
        );
        expect(created).toMatchObject({ limit: 'maxTotalBytes', maximum: 20 });
        await expectStoreError(
          store.write('b.md', '0123456789a', { mode: 'overwrite' }),
          'quota_exceeded',
        );
        await expectStoreError(
          store.edit('a.md', (current) => `${current}xx`),
          'quota_exceeded',
        );
        expect(await snapshot(store)).toEqual(before);
        expect(await store.usage()).toEqual({ bytes: 19, files: 2 });
        // Filling exactly up to the limit is allowed; shrinking is always allowed.
        await store.write('c.md', '0', { mode: 'create' });
        await store.write('a.md', '0', { mode: 'overwrite' });
        await store.edit('b.md', () => 'b');
        expect(await store.usage()).toEqual({ bytes: 3, files: 3 });
      },
    },
    {
      name: 'maxFiles refuses a new file beyond the limit and still allows overwrites',
      limits: { maxFiles: 2 },
      run: async (store) => {
        await seed(store, { 'a.md': 'a', 'dir/b.md': 'b' });
        const before = await snapshot(store);
        const error = await expectStoreError(
          store.write('other/c.md', 'c', { mode: 'create' }),
          'quota_exceeded',
        );
        expect(error).toMatchObject({ limit: 'maxFiles', maximum: 2 });
        await expectStoreError(store.write('c.md', 'c', { mode: 'overwrite' }), 'quota_exceeded');
        expect(await snapshot(store)).toEqual(before);
        expect(await store.stat('other')).toBeNull();
        await store.write('a.md', 'replaced', { mode: 'overwrite' });
        await store.edit('dir/b.md', () => 'edited');
        await store.rename('dir/b.md', 'moved.md');
        await store.delete('a.md');
        await store.write('c.md', 'c', { mode: 'create' });
        expect(await store.usage()).toEqual({ bytes: 7, files: 2 });
      },
    },
    {
      name: 'concurrent creates never overshoot maxFiles',
      limits: { maxFiles: 3 },
      run: async (store) => {
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, index) =>
            store.write(`file-${index}.md`, 'x', { mode: 'create' }),
          ),
        );
        const fulfilled = results.filter((result) => result.status === 'fulfilled');
        expect(fulfilled).toHaveLength(3);
        for (const result of results) {
          if (result.status === 'rejected') {
            expect(isStoreError(result.reason, 'quota_exceeded')).toBe(true);
          }
        }
        expect(await store.usage()).toEqual({ bytes: 3, files: 3 });
      },
    },
    {
      name: 'concurrent edits never overshoot maxTotalBytes',
      limits: { maxTotalBytes: 10 },
      run: async (store) => {
        await seed(store, { 'a.md': '', 'b.md': '' });
        const results = await Promise.allSettled(
          Array.from({ length: 16 }, (_, index) =>
            store.edit(index % 2 === 0 ? 'a.md' : 'b.md', (current) => `${current}x`),
          ),
        );
        expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(10);
        expect(await store.usage()).toEqual({ bytes: 10, files: 2 });
        const total =
          ((await store.read('a.md')) ?? '').length + ((await store.read('b.md')) ?? '').length;
        expect(total).toBe(10);
      },
    },
  ],
};
