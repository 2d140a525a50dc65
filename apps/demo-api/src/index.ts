/**
 * @tessera/demo-api — a small Koa API protected by `@tessera/verifier`: the example an API team
 * copies. Configured from the environment (ISSUERS, AUDIENCE, JWT_SECRET, ALGORITHMS, PORT,
 * HOST); `src/main.ts` listens.
 *
 * @module
 */
export { createApp } from './app.js'
export type { AppOptions, DemoApi } from './app.js'
export { parseSettings } from './settings.js'
export type { Settings } from './settings.js'
