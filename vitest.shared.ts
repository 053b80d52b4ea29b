import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings. Workspace packages resolve to their TypeScript sources through the
 * `@baton/source` export condition, so tests never depend on a stale `dist/`.
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ['@baton/source', 'module', 'node', 'import', 'default'] },
  ssr: { resolve: { conditions: ['@baton/source', 'module', 'node', 'import', 'default'] } },
  test: {
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
