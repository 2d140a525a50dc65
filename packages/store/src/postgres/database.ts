import pg from 'pg'
import type { CustomTypesConfig } from 'pg'
import { StoreError } from '../errors.js'
import { conflictError } from '../internal/checks.js'

/**
 * Where a PostgreSQL URL points, for messages: database, host and port, never the user or the
 * password. Parsed once, up front, so that a URL pg could not use is refused before any I/O.
 */
export interface PgTarget {
  readonly database: string
  readonly host: string
  readonly port: string
}

/** `database "tessera" on db.internal:5432`: the only description of a URL a message carries. */
export function describeTarget(target: PgTarget): string {
  return `database "${target.database}" on ${target.host}:${target.port}`
}

/**
 * The database, host and port of a `postgres://` or `postgresql://` URL, with libpq's defaults
 * (localhost, 5432, the user's name); a socket directory may come as `?host=/run/postgresql`.
 *
 * @throws StoreError `ERR_STORE_URL` for a URL that does not parse, naming no part of it
 */
export function parseTarget(url: string): PgTarget {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new StoreError('ERR_STORE_URL', 'DATABASE_URL is not a valid postgres:// URL')
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new StoreError(
      'ERR_STORE_URL',
      'DATABASE_URL must start with postgres:// or postgresql://',
    )
  }
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text)
    } catch {
      return text
    }
  }
  const user = decode(parsed.username)
  return {
    database: decode(parsed.pathname.slice(1)) || user || 'postgres',
    host: decode(parsed.hostname) || parsed.searchParams.get('host') || 'localhost',
    port: parsed.port || '5432',
  }
}

// Parsers by type OID, for this adapter's pools only: pg's global parsers stay untouched, and a
// change another module makes to them cannot reach this adapter.
const INT8 = 20
const INT4 = 23
const BYTEA = 17
const JSON_OID = 114

function identity(text: string): string {
  return text
}

/** Epoch milliseconds fit a double exactly; anything else stays text and fails row validation. */
function parseInteger(text: string): number | string {
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : text
}

const parseByteaEscape = pg.types.getTypeParser(BYTEA) as (text: string) => Buffer

/** BYTEA columns hold UTF-8 text that may contain U+0000; they come back as strings. */
function parseUtf8Bytea(text: string): string {
  const bytes = text.startsWith('\\x')
    ? Buffer.from(text.slice(2), 'hex')
    : // A session set to bytea_output = escape.
      parseByteaEscape(text)
  return bytes.toString('utf8')
}

const PARSERS = new Map<number, (text: string) => unknown>([
  [INT8, parseInteger],
  [INT4, parseInteger],
  [BYTEA, parseUtf8Bytea],
  // Kept as text: the row schema parses it and checks that it is an object.
  [JSON_OID, identity],
])

/** The `types` option of this adapter's pools: every other type stays text. */
export const PG_TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number) =>
    PARSERS.get(oid) ?? identity) as CustomTypesConfig['getTypeParser'],
}

/** Node's errno codes of a failed or lost connection. */
const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed',
}

/** SQLSTATEs of a server that refuses or drops the session, as opposed to refusing a statement. */
function describeSqlState(code: string): string | undefined {
  if (code === '3D000') return 'the database does not exist'
  if (code.startsWith('28')) return 'authentication failed'
  if (code === '53300') return 'too many connections'
  if (code === '57P01' || code === '57P02') return 'the server terminated the connection'
  if (code === '57P03') return 'the server is not accepting connections yet'
  if (code.startsWith('08')) return 'connection failure'
  return undefined
}

// pg's own errors for a connection that fails or dies carry no code, only these messages.
const PG_CONNECTION_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed)/

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  return typeof error.code === 'string' ? error.code : undefined
}

/**
 * Why a connection failed, in words safe to put in a message (the driver's own messages may
 * name the user), or undefined when the error is not about the connection.
 */
export function describeConnectionFailure(error: unknown): string | undefined {
  const code = codeOf(error)
  if (error instanceof pg.DatabaseError) {
    const reason = code === undefined ? undefined : describeSqlState(code)
    return reason === undefined ? undefined : `${reason} (SQLSTATE ${code})`
  }
  if (code !== undefined && code in NETWORK_CODES) return NETWORK_CODES[code]
  // Any other failed system call on the way to the server (a missing socket file: ENOENT).
  if (code !== undefined && typeof error === 'object' && error !== null && 'syscall' in error) {
    return `connection failed (${code})`
  }
  if (error instanceof Error && PG_CONNECTION_MESSAGE.test(error.message)) {
    return /timeout/i.test(error.message) ? 'connection timed out' : 'connection lost'
  }
  return undefined
}

/** The error for a database that cannot be opened, connected to or migrated. */
export function openError(target: PgTarget, cause: unknown): StoreError {
  // Statements fail only in the migration; any other error is on the way to the server (TLS,
  // a refused handshake), detailed in the cause.
  const reason =
    describeConnectionFailure(cause) ??
    (cause instanceof pg.DatabaseError
      ? `migration failed (SQLSTATE ${codeOf(cause) ?? 'unknown'})`
      : 'connection failed')
  const message = `cannot open the PostgreSQL ${describeTarget(target)}: ${reason}`
  return new StoreError('ERR_STORE_OPEN', message, { cause })
}

/** What each primary key names, for ERR_STORE_CONFLICT; never the key itself. */
const CONFLICTS: Record<string, string> = {
  authorization_codes_pkey: 'the authorization code',
  refresh_families_pkey: 'the refresh family',
  refresh_tokens_pkey: 'the refresh token',
  sessions_pkey: 'the session',
  registered_clients_pkey: 'the registered client',
}

/**
 * The StoreError a driver error stands for: a taken primary key is `ERR_STORE_CONFLICT`, a lost
 * or refused connection `ERR_STORE_UNAVAILABLE`; anything else (a bug, a broken schema) is returned as
 * it is, like the SQLite adapter does.
 */
export function translateError(target: PgTarget, error: unknown): unknown {
  if (error instanceof pg.DatabaseError && error.code === '23505') {
    return conflictError(CONFLICTS[error.constraint ?? ''] ?? 'the record', error)
  }
  const connection = describeConnectionFailure(error)
  if (connection !== undefined) {
    return new StoreError(
      'ERR_STORE_UNAVAILABLE',
      `cannot reach the PostgreSQL ${describeTarget(target)}: ${connection}`,
      { cause: error },
    )
  }
  return error
}
