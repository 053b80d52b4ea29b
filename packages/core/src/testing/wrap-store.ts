import type { MemoryStore } from '../store.js';

/**
 * `store` as a plain object with its methods bound (stores keep private fields, so a spread
 * would lose them) and some replaced: for tests that count, delay or fail store calls.
 */
export function wrapStore(store: MemoryStore, overrides: Partial<MemoryStore> = {}): MemoryStore {
  return {
    read: (path) => store.read(path),
    stat: (path) => store.stat(path),
    write: (path, content, options) => store.write(path, content, options),
    edit: (path, transform, context) => store.edit(path, transform, context),
    list: (path, options) => store.list(path, options),
    delete: (path, context) => store.delete(path, context),
    rename: (from, to, context) => store.rename(from, to, context),
    usage: () => store.usage(),
    close: () => store.close(),
    ...overrides,
  };
}
