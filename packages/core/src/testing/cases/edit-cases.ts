import { expect } from 'vitest';
import { expectStoreError, seed, snapshot, type ConformanceGroup } from '../harness.js';

/** edit: the read-modify-write primitive. */
export const editCases: ConformanceGroup = {
  name: 'edit',
  cases: [
    {
      name: 'edit stores the transform result and returns before and after',
      run: async (store) => {
        await seed(store, { 'notes.md': 'one\n' });
        const result = await store.edit('notes.md', (current) => `${current}two\n`, {
          command: 'insert',
          session: 'conformance',
        });
        expect(result).toEqual({ before: 'one\n', after: 'one\ntwo\n' });
        expect(await store.read('notes.md')).toBe('one\ntwo\n');
        expect(await store.stat('notes.md')).toMatchObject({ kind: 'file', size: 8 });
        expect(await store.usage()).toEqual({ bytes: 8, files: 1 });
      },
    },
    {
      name: 'edit can empty a file and fill it again',
      run: async (store) => {
        await seed(store, { 'notes.md': 'text' });
        await store.edit('notes.md', () => '');
        expect(await store.read('notes.md')).toBe('');
        await store.edit('notes.md', (current) => `${current}back`);
        expect(await store.read('notes.md')).toBe('back');
      },
    },
    {
      name: 'edit of a missing file throws not_found and creates nothing',
      run: async (store) => {
        await expectStoreError(
          store.edit('missing.md', () => 'x'),
          'not_found',
        );
        expect(await store.stat('missing.md')).toBeNull();
        await seed(store, { 'file.md': 'x' });
        await expectStoreError(
          store.edit('file.md/below.md', () => 'x'),
          'not_found',
        );
        expect(await store.read('file.md')).toBe('x');
      },
    },
    {
      name: 'edit of a directory throws is_directory',
      run: async (store) => {
        await seed(store, { 'dir/a.md': 'a' });
        await expectStoreError(
          store.edit('dir', () => 'x'),
          'is_directory',
        );
        expect((await store.stat('dir'))?.kind).toBe('directory');
      },
    },
    {
      name: 'an error thrown by the transform propagates unchanged and nothing is written',
      run: async (store) => {
        await seed(store, { 'notes.md': 'keep me' });
        const before = await snapshot(store);
        const refusal = new Error('refused by hook');
        let seen = 0;
        const outcome = await store
          .edit('notes.md', (current) => {
            seen += 1;
            expect(current).toBe('keep me');
            throw refusal;
          })
          .then(
            () => 'resolved',
            (error: unknown) => error,
          );
        expect(outcome).toBe(refusal);
        expect(seen).toBeGreaterThanOrEqual(1);
        expect(await snapshot(store)).toEqual(before);
        expect(await store.usage()).toEqual({ bytes: 7, files: 1 });
      },
    },
  ],
};
