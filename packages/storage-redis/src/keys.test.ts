import { describe, expect, it } from 'vitest';
import { createNamespaceKeys } from './keys.js';

describe('every key of a namespace carries the same hash tag', () => {
  it('builds keys under <prefix>:{<namespace>}:', () => {
    const keys = createNamespaceKeys('project-1');
    const all = [
      keys.meta,
      keys.accessTimes,
      keys.feed,
      keys.children(''),
      keys.children('a/b'),
      keys.file('a/b.md'),
      keys.history('a/b.md'),
      keys.kept('1733000000000000:7'),
      keys.body('a/b.md'),
      keys.writeStage('1'),
    ];
    for (const key of all) {
      expect(key.startsWith('baton:{project-1}:')).toBe(true);
    }
    expect(new Set(all).size).toBe(all.length);
  });

  it('honours a custom prefix', () => {
    expect(createNamespaceKeys('p', 'acme').meta).toBe('acme:{p}:meta');
  });

  it('refuses names that would break the hash tag', () => {
    expect(() => createNamespaceKeys('a}b')).toThrow(TypeError);
    expect(() => createNamespaceKeys('')).toThrow(TypeError);
    expect(() => createNamespaceKeys('a b')).toThrow(TypeError);
    expect(() => createNamespaceKeys('ok', 'x{y')).toThrow(TypeError);
  });
});
