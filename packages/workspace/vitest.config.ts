import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

export default mergeConfig(sharedConfig, {
  test: { globalSetup: ['test/support/global-setup.ts'] },
});
