import pg from 'pg'
import { checkedStore } from './internal/checked-store.js'
import { migratePostgres } from './internal/pg-migrations.js'
import { openError, parseTarget, PG_TYPES } from './postgres/database.js'
import { createPostgresStore } from './postgres/store.js'
import type { Store } from './store.js'

/** Tuning of {@link openPostgresStore}; every field is optional. */
export interface PostgresStoreOptions {
  /** The most connections the pool holds at once; default 10. */
  maxConnections?: number
  /** How long to wait for a connection, in milliseconds, before failing; default 5000. */
  connectTimeoutMs?: number
  /**
   * Told when an idle pooled connection fails (a server restart, a network cut). The pool drops
   * that connection and opens another on demand; without this hook the error is ignored, and
   * never crashes the process.
   */
  onIdleError?: (error: Error) => void
}

/**
 * Opens a PostgreSQL store: the adapter for several issuer replicas sharing one database. A pool
 * of connections (node-postgres), the schema migrated on open under an advisory lock, and every
 * single-use and rotation rule enforced by the database, so that it holds across processes.
 *
 * @param url - `postgres://user:password@host:port/database?…` (or `postgresql://`); query
 *   parameters such as `sslmode` are passed to node-postgres
 * @param options - pool size, connect timeout and an idle-error hook
 * @throws StoreError `ERR_STORE_URL` for a URL that does not parse; `ERR_STORE_OPEN` when the
 *   server cannot be reached, refuses the login, lacks the database or the migration fails. The
 *   message names the database, host and port only, never the user or password.
 * @example
 * ```ts
 * const store = await openPostgresStore('postgres://tessera@db.internal:5432/tessera')
 * ```
 */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<Store> {
  if (typeof url !== 'string') throw new TypeError('openPostgresStore: url must be a string')
  const { maxConnections = 10, connectTimeoutMs = 5000, onIdleError } = options
  if (!(Number.isSafeInteger(maxConnections) && maxConnections > 0)) {
    throw new TypeError('openPostgresStore: options.maxConnections must be a positive integer')
  }
  if (!(Number.isSafeInteger(connectTimeoutMs) && connectTimeoutMs > 0)) {
    throw new TypeError('openPostgresStore: options.connectTimeoutMs must be positive milliseconds')
  }
  if (onIdleError !== undefined && typeof onIdleError !== 'function') {
    throw new TypeError('openPostgresStore: options.onIdleError must be a function')
  }
  const target = parseTarget(url)
  const pool = new pg.Pool({
    connectionString: url,
    max: maxConnections,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: 'tessera',
    types: PG_TYPES,
  })
  // An idle client that errors is removed by the pool; the listener only keeps the 'error'
  // event from becoming an uncaught exception.
  pool.on('error', (error) => onIdleError?.(error))
  try {
    const client = await pool.connect()
    // A checked-out client has no listener of the pool's (see transaction below).
    const ignore = (): void => undefined
    client.on('error', ignore)
    let broken: Error | undefined
    try {
      await migratePostgres(client)
    } catch (error) {
      broken = error instanceof Error ? error : new Error('migration failed')
      throw error
    } finally {
      client.off('error', ignore)
      client.release(broken)
    }
  } catch (cause) {
    await pool.end().catch(() => undefined)
    throw openError(target, cause)
  }
  return checkedStore(createPostgresStore(pool, target))
}
