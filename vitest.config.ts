import { defineConfig } from 'vitest/config'

// Each workspace package has its own vitest.config.ts; turbo runs them one by one, and this
// lets `vitest` at the root run them all at once in watch mode.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*'],
  },
})
