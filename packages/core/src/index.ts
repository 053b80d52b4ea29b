export { StoreError, isStoreError } from './store.js';
export type {
  EditResult,
  EntryKind,
  EntryStat,
  ListOptions,
  ListedEntry,
  MemoryStore,
  MutationContext,
  StoreErrorCode,
  StoreErrorOptions,
  StoreLimits,
  StoreUsage,
  WriteOptions,
} from './store.js';

// stores (core-stores helper)
export { InMemoryStore, createInMemoryStore } from './stores/in-memory-store.js';
export type { InMemoryStoreOptions } from './stores/in-memory-store.js';
