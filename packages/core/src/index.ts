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
