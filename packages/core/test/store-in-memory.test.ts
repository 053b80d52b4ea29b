import { describe, expect, it } from 'vitest';
import { createInMemoryStore, isStoreError } from '@baton/core';

describe('InMemoryStore', () => {
  it('writes, reads, lists and renames', async () => {
    const store = createInMemoryStore();
    await store.write('notes/a.md', 'hello', { mode: 'create' });
    expect(await store.read('notes/a.md')).toBe('hello');
    expect((await store.list('', { depth: 2 })).map((entry) => entry.path)).toEqual([
      'notes',
      'notes/a.md',
    ]);
    await store.rename('notes', 'archive/notes');
    expect(await store.read('archive/notes/a.md')).toBe('hello');
    expect(await store.usage()).toEqual({ bytes: 5, files: 1 });
  });

  it('refuses a write over maxFileBytes with quota_exceeded', async () => {
    const store = createInMemoryStore({ limits: { maxFileBytes: 3 } });
    const error: unknown = await store
      .write('a', 'abcd', { mode: 'create' })
      .catch((e: unknown) => e);
    expect(isStoreError(error, 'quota_exceeded')).toBe(true);
    expect(await store.stat('a')).toBeNull();
  });
});
