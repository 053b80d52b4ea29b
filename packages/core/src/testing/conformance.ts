import { describe, it } from 'vitest';
import { concurrencyCases } from './cases/concurrency-cases.js';
import { deleteCases } from './cases/delete-cases.js';
import { editCases } from './cases/edit-cases.js';
import { limitCases } from './cases/limit-cases.js';
import { listCases } from './cases/list-cases.js';
import { miscCases } from './cases/misc-cases.js';
import { readWriteCases } from './cases/read-write-cases.js';
import { renameCases } from './cases/rename-cases.js';
import type { ConformanceFixture, ConformanceGroup, ConformanceSetupOptions } from './harness.js';

/** Every group of the suite, in the order they are registered. */
export const CONFORMANCE_GROUPS: readonly ConformanceGroup[] = [
  readWriteCases,
  listCases,
  deleteCases,
  renameCases,
  editCases,
  concurrencyCases,
  limitCases,
  miscCases,
];

/** Options of `describeMemoryStoreConformance`. */
export interface MemoryStoreConformanceOptions {
  /**
   * Names of cases this backend knowingly skips (see `memoryStoreConformanceCaseNames()`).
   * Every skip must be justified where it is declared. An unknown name is an error, so a renamed
   * case cannot silently stop being skipped or checked.
   */
  skip?: string[];
}

/** The name of every case in the suite, for `options.skip`. */
export function memoryStoreConformanceCaseNames(): string[] {
  return CONFORMANCE_GROUPS.flatMap((group) => group.cases.map((testCase) => testCase.name));
}

/**
 * Registers the `MemoryStore` conformance suite as vitest `describe`/`it` blocks. Call it at the
 * top level of a test file. `setup` runs once per case and must return a fresh, empty store
 * honouring `options.limits`; `cleanup` runs after the case, even when it failed, and possibly
 * after the case called `store.close()`.
 */
export function describeMemoryStoreConformance(
  name: string,
  setup: (options: ConformanceSetupOptions) => Promise<ConformanceFixture>,
  options: MemoryStoreConformanceOptions = {},
): void {
  const skip = new Set(options.skip ?? []);
  const known = new Set(memoryStoreConformanceCaseNames());
  const unknown = [...skip].filter((caseName) => !known.has(caseName));
  if (unknown.length > 0) {
    throw new Error(`Unknown conformance case names in skip: ${unknown.join(', ')}`);
  }
  describe(`MemoryStore conformance: ${name}`, () => {
    for (const group of CONFORMANCE_GROUPS) {
      describe(group.name, () => {
        for (const testCase of group.cases) {
          const register = skip.has(testCase.name) ? it.skip : it;
          register(testCase.name, async () => {
            const fixture = await setup({ limits: testCase.limits });
            try {
              await testCase.run(fixture.store);
            } finally {
              await fixture.cleanup();
            }
          });
        }
      });
    }
  });
}
