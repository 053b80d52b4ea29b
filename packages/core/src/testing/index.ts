/**
 * `@baton/core/testing`: the behavioural suite every `MemoryStore` backend must pass.
 *
 * ```ts
 * import { describeMemoryStoreConformance } from '@baton/core/testing';
 * describeMemoryStoreConformance('MyStore', async ({ limits }) => {
 *   const store = await createMyStore({ limits });
 *   return { store, cleanup: () => store.destroyEverything() };
 * });
 * ```
 * Needs vitest (an optional peer dependency of `@baton/core`).
 */
export { HOSTILE_MEMORY_PATHS } from './hostile-paths.js';
export { wrapStore } from './wrap-store.js';
export type { HostileMemoryPath } from './hostile-paths.js';
export { describeMemoryStoreConformance, memoryStoreConformanceCaseNames } from './conformance.js';
export type { MemoryStoreConformanceOptions } from './conformance.js';
export type {
  ConformanceCase,
  ConformanceFixture,
  ConformanceGroup,
  ConformanceSetupOptions,
} from './harness.js';
