import type {
  AuthorizationCodeStore,
  ClientRegistrationStore,
  ConsentStore,
  ExpiryStore,
  MarkStore,
  RefreshTokenStore,
  SecretStore,
  SessionStore,
  ThrottleStore,
  FailureCounter,
} from '@tessera/grants'
import type { KeyStore, TenantAlgorithmStore } from '@tessera/keys'
import { StoreError } from './errors.js'
import { createMemoryStore } from './memory/index.js'
import { openPostgresStore } from './postgres.js'
import type { ParsedConfigStore } from './parsed-config.js'
import { openSqliteStore } from './sqlite.js'

/** Every port adapter over one database, with its lifecycle. */
export interface Store {
  /** RS256 key pairs (@tessera/keys). */
  readonly keys: KeyStore
  /** Each tenant's signing-algorithm history (@tessera/keys). */
  readonly algorithms: TenantAlgorithmStore
  /** Failed-password counters (@tessera/grants). */
  readonly throttle: ThrottleStore
  /** Failed client authentications (@tessera/grants). */
  readonly clientAuthFailures: FailureCounter
  /** Authorization codes, single use (@tessera/grants). */
  readonly codes: AuthorizationCodeStore
  /** Refresh-token families, with rotation and reuse detection (@tessera/grants). */
  readonly refreshTokens: RefreshTokenStore
  /** Expiring marks: single-use identifiers and revocations, until they expire (@tessera/grants). */
  readonly marks: MarkStore
  /** Server-wide secrets, one value per name for every replica (@tessera/grants). */
  readonly secrets: SecretStore
  /** OpenID Connect sign-in sessions, and the logout that ends them (@tessera/grants). */
  readonly sessions: SessionStore
  /**
   * Clients registered through RFC 7591, shared by every replica; their secrets and registration
   * tokens are kept as SHA-256 hashes only (@tessera/grants).
   */
  readonly clientRegistrations: ClientRegistrationStore
  /** Users' remembered consents to dynamic clients, until they expire (@tessera/grants). */
  readonly consents: ConsentStore
  /** Removal of expired codes, families, throttle windows, marks, sessions and consents. */
  readonly expiry: ExpiryStore
  /** Parse results of tenant files, to start faster on a warm database (see docs/data-at-rest.md). */
  readonly parsedConfig: ParsedConfigStore
  /** Resolves when the database answers; for readiness probes. */
  ping(): Promise<void>
  /** Releases the database. Idempotent; any later use rejects with `ERR_STORE_CLOSED`. */
  close(): Promise<void>
}

/** Tuning of {@link openStore}; every field is optional. */
export interface OpenStoreOptions {
  /**
   * PostgreSQL only: connections in the pool of this process (default 10); SQLite and memory:
   * ignored.
   */
  maxConnections?: number
}

const EXPECTED = 'expected sqlite:PATH, memory: or postgres://…'

/**
 * The scheme of a URL, or undefined when naming it could leak a secret: in `user:pass@host`
 * (a URL missing its scheme) the part before the first colon is a user name.
 */
function safeScheme(url: string): string | undefined {
  const match = /^([a-z][a-z0-9+.-]{0,31}):(.*)$/is.exec(url)
  if (match?.[1] === undefined) return undefined
  const rest = match[2] ?? ''
  return rest.startsWith('//') || !rest.includes('@') ? match[1].toLowerCase() : undefined
}

/**
 * Opens the store a DATABASE_URL names:
 *
 * - `memory:` — in-process maps; for tests, nothing survives the process.
 * - `sqlite:PATH` — an SQLite file, PATH relative to the working directory, its directory created
 *   if missing; `sqlite::memory:` for a private in-memory database.
 * - `postgres://…`, `postgresql://…` — a PostgreSQL database shared by several replicas, through
 *   a pool of `options.maxConnections` connections (default 10); see {@link openPostgresStore}.
 *
 * @param options - the PostgreSQL pool size; SQLite and memory: ignore it
 * @throws StoreError `ERR_STORE_URL` for anything else, naming the scheme only; `ERR_STORE_OPEN`
 *   when the database cannot be opened, naming at most a PostgreSQL database, host and port
 * @throws TypeError naming `maxConnections` when it is not a positive integer (PostgreSQL only)
 * @example
 * ```ts
 * const store = await openStore(process.env.DATABASE_URL ?? 'sqlite:./data/tessera.db')
 * try {
 *   await store.ping()
 * } finally {
 *   await store.close()
 * }
 * ```
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (typeof url !== 'string') throw new TypeError('openStore: url must be a string')
  const scheme = safeScheme(url)
  switch (scheme) {
    case 'memory':
      if (url.length > 'memory:'.length) {
        throw new StoreError('ERR_STORE_URL', `DATABASE_URL memory: takes no path; ${EXPECTED}`)
      }
      return createMemoryStore()
    case 'sqlite':
      return openSqliteStore(url.slice('sqlite:'.length))
    case 'postgres':
    case 'postgresql':
      return openPostgresStore(url, { maxConnections: options.maxConnections })
    case undefined:
      throw new StoreError('ERR_STORE_URL', `DATABASE_URL has no recognisable scheme; ${EXPECTED}`)
    default:
      throw new StoreError(
        'ERR_STORE_URL',
        `DATABASE_URL scheme "${scheme}:" is not supported; ${EXPECTED}`,
      )
  }
}
