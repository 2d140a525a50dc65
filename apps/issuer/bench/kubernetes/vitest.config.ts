import { defineConfig } from 'vitest/config'

// Only the start-up measurement of the kubernetes source: run by hand, not by `pnpm test`.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['bench/kubernetes/startup.test.ts'],
    testTimeout: 3_600_000,
    hookTimeout: 60_000,
  },
})
