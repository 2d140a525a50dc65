import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    restoreMocks: true,
    // The JSON report and the errors caught outside tests feed scripts/test-summary.mjs, which
    // prints one total for the repo.
    reporters: [
      'default',
      ['json', { outputFile: 'test-results/vitest.json' }],
      '../../scripts/vitest-unhandled-errors.mjs',
    ],
    // Child processes are slow on a 2-core machine running several packages' tests at once;
    // no test relies on this limit to pass.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
