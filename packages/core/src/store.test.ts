import { describe, expect, it } from 'vitest';
import { StoreError, isStoreError } from '@baton/core';

describe('StoreError', () => {
  it('carries a code that isStoreError can match', () => {
    const error = new StoreError('not_found', 'nothing there');
    expect(isStoreError(error, 'not_found')).toBe(true);
    expect(isStoreError(error, 'exists')).toBe(false);
  });
});
