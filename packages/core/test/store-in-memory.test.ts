import { describe, expect, it } from 'vitest';
import { createInMemoryStore } from '@baton/core';
import { describeMemoryStoreConformance } from '@baton/core/testing';

describeMemoryStoreConformance('InMemoryStore', ({ limits }) => {
  const store = createInMemoryStore({ limits });
  return Promise.resolve({ store, cleanup: () => store.close() });
});

describe('store limits validation', () => {
  it('treats Infinity as unlimited and rejects nonsense limits', async () => {
    const store = createInMemoryStore({ limits: { maxFiles: Infinity, maxFileBytes: 2 } });
    await store.write('a.md', 'ab', { mode: 'create' });
    expect(() => createInMemoryStore({ limits: { maxFiles: -1 } })).toThrow(/maxFiles/);
    expect(() => createInMemoryStore({ limits: { maxTotalBytes: 1.5 } })).toThrow(/maxTotalBytes/);
    expect(() => createInMemoryStore({ limits: { maxFileBytes: Number.NaN } })).toThrow(
      /maxFileBytes/,
    );
  });
});
