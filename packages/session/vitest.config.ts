import { defineConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// The shared settings without the `module` condition: it picks OpenTelemetry's bundler build
// (extensionless ESM imports that Node cannot load); its `default` build is the one Node uses.
const conditions = ['@baton/source', 'node', 'import', 'default'];

export default defineConfig({
  ...sharedConfig,
  resolve: { ...sharedConfig.resolve, conditions },
  ssr: { ...sharedConfig.ssr, resolve: { ...sharedConfig.ssr?.resolve, conditions } },
});
