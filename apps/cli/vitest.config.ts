import { availableParallelism } from 'node:os';
import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

/**
 * Test files run at once. vitest's default (one less than the cores) runs one file at a time on
 * the 2-core CI machine, yet a file here mostly waits on the `baton` processes, git, bubblewrap
 * and simulators it starts (about 0.8 of a core busy): two files at once ran 26-33% faster on a
 * loaded machine, three no faster than two (docs/benchmarks.md, "CI wall time"). Every test has
 * its own temp dir, Redis prefix and ports, so files do not share state.
 */
const TEST_FILES_AT_ONCE = Math.max(2, availableParallelism() - 1);

export default mergeConfig(sharedConfig, {
  test: {
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 60_000,
    maxWorkers: TEST_FILES_AT_ONCE,
  },
});
