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
export {
  FILE_SYSTEM_STORE_RESERVED_NAME,
  FileSystemStore,
  createFileSystemStore,
} from './stores/file-system-store.js';
export type { FileSystemStoreOptions } from './stores/file-system-store.js';
