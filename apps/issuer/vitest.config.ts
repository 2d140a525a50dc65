import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    restoreMocks: true,
    // The JSON report and the errors caught outside tests feed scripts/test-summary.mjs, which
    // prints one total for the repo.
    reporters: [
      'default',
      ['json', { outputFile: 'test-results/vitest.json' }],
      '../../scripts/vitest-unhandled-errors.mjs',
    ],
    // RSA key generation and child processes are slow on a 2-core machine running several
    // packages' tests at once; no test relies on this limit to pass.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most files here wait on issuers in child processes, or on real time (publish ahead runs
    // 90 s), not on this process's CPU: two files at once, where vitest's default on a 2-core
    // machine is one.
    maxWorkers: 2,
  },
})
