import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// Installing from the registry and starting deployed apps takes longer than a unit test.
export default mergeConfig(sharedConfig, {
  test: { testTimeout: 300_000, hookTimeout: 300_000 },
});
