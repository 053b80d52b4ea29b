import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

export default mergeConfig(sharedConfig, {
  test: {
    // Process tests spawn dist/main.js: build it (and the packages it loads) first.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites start real worker processes; running them one file at a time keeps 2 cores sane.
    fileParallelism: false,
  },
});
