/**
 * A small kit for store authors: the helpers `InMemoryStore` and `FileSystemStore` use to meet
 * the `MemoryStore` contract, exported so other backends (`@baton/storage-redis`) share them
 * instead of copying them. Import from `@baton/core/store-kit`.
 */
export {
  DIRECTORY_SIZE,
  ancestorsOf,
  assertStorePath,
  compareCodeUnits,
  isBelow,
  isHiddenName,
  parentOf,
} from './stores/internal/store-paths.js';
export { assertWithinLimits, validateLimits } from './stores/internal/store-limits.js';
export type { ProjectedUsage } from './stores/internal/store-limits.js';
export { containsSecret } from './redaction.js';
