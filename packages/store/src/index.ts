/**
 * @tessera/store — adapters for the ports that @tessera/keys and @tessera/grants declare:
 * memory (tests), SQLite (the embedded default) and PostgreSQL (several replicas).
 *
 * @example
 * ```ts
 * import { openStore } from '@tessera/store'
 *
 * const store = await openStore(process.env.DATABASE_URL ?? 'sqlite:./data/tessera.db')
 * const ring = await loadKeyRing({ tenant: 'acme', store: store.keys, ... })
 * // grants: { codes: store.codes, refreshTokens: store.refreshTokens, throttle: store.throttle, ... }
 * ```
 *
 * @module
 */
export { openStore } from './store.js'
export type { OpenStoreOptions, Store } from './store.js'
export type { ParsedConfigEntry, ParsedConfigStore } from './parsed-config.js'
export { createMemoryStore } from './memory/index.js'
export { openSqliteStore } from './sqlite.js'
export { openPostgresStore } from './postgres.js'
export type { PostgresStoreOptions } from './postgres.js'
export { StoreError } from './errors.js'
export type { StoreErrorCode } from './errors.js'
