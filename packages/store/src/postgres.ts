import type {
  AuthorizationCodeStore,
  ExpiryStore,
  MarkStore,
  RefreshTokenStore,
  RotateResult,
  SecretStore,
  SessionStore,
} from '@tessera/grants'
import type { KeyStore, StoredKey } from '@tessera/keys'
import pg from 'pg'
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg'
import {
  createPostgresFailureCounter,
  PG_PURGE_CLIENT_AUTH_FAILURES,
} from './client-auth-failures.js'
import { StoreError } from './errors.js'
import type { ParsedConfigStore } from './parsed-config.js'
import type { Store } from './store.js'
import {
  checkCursor,
  checkTenantNames,
  checkCode,
  checkEndSessionArgs,
  checkMarkArgs,
  checkRedeemArgs,
  checkSecretArgs,
  checkText,
  checkSession,
  checkTime,
  parsedConfigToAdd,
  parsedConfigToKeep,
} from './internal/checks.js'
import { checkedStore } from './internal/checked-store.js'
import { codesToKeep } from './internal/code-bound.js'
import { CODE_RETENTION_MS, rotationStep } from './internal/lifecycle.js'
import {
  PG_TYPES,
  openError,
  parseTarget,
  translateError,
  type PgTarget,
} from './internal/pg-database.js'
import { migratePostgres } from './internal/pg-migrations.js'
import { PURGE_HOLDS, pgThrottle } from './internal/pg-throttle.js'
import { createPostgresTenantAlgorithms } from './internal/tenant-algorithms.js'
import {
  parseCodeRow,
  parseFamilyRow,
  keyChangesOf,
  parseKeyCursorRow,
  parseKeyRow,
  parseParsedConfigRow,
  parsePrunedKidRow,
  parseSecretRow,
  parseSessionEnd,
  parseSessionRow,
  parseTokenFamilyRow,
} from './internal/rows.js'

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
 * The key of the advisory lock that serialises purges across replicas (see MIGRATION_LOCK).
 * ASCII "tess" + 2.
 */
const PURGE_LOCK = 0x7465_7373_02

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

const KEY_COLUMNS =
  'tenant, kid, alg, public_jwk, private_key, created_at, state, retired_at, signs_from'
const CODE_COLUMNS = `tenant, code_hash, client_id, redirect_uri, code_challenge, scope, sub, claims,
  created_at, expires_at, consumed_at, nonce, sid, auth_time`
const FAMILY_COLUMNS = `tenant, family_id, client_id, sub, scope, claims, code_hash, sid, auth_time,
  created_at, expires_at, revoked_at`
const SESSION_COLUMNS = `tenant, id_hash, sid, sub, claims, auth_time, created_at, expires_at,
  ended_at`
// The token's own columns are prefixed so that they cannot shadow the family's.
const TOKEN_FAMILY_SELECT = `
  SELECT f.tenant, f.family_id, f.client_id, f.sub, f.scope, f.claims, f.code_hash, f.sid,
    f.auth_time, f.created_at, f.expires_at, f.revoked_at,
    t.token_hash, t.created_at AS token_created_at, t.spent_at AS token_spent_at
  FROM refresh_tokens AS t
  JOIN refresh_families AS f ON f.tenant = t.tenant AND f.family_id = t.family_id
  WHERE t.tenant = $1 AND t.token_hash = $2`

/**
 * A rotation as one statement, so one round trip and one commit (see rotateRefreshToken).
 * Parameters: $1 tenant, $2 the presented hash, $3 now, $4 the new hash, and, with `forClient`,
 * $5 the client that presents it.
 *
 * - `locked` reads the token and its family and locks both rows (NO KEY UPDATE, the lock an
 *   UPDATE of non-key columns takes: foreign-key checks on the family stay unblocked).
 *   Concurrent rotations of one token, on any replica, queue here. Under READ COMMITTED a row
 *   lock that had to wait re-reads the newest committed version of both rows and re-checks the
 *   join (EvalPlanQual), so `locked` holds the rows as the last holder of the lock committed
 *   them, not as the statement's snapshot saw them. With a client, a family of another client
 *   is filtered out before the lock: its token is as unknown as a made-up one, and nothing
 *   changes. A CTE with a row lock is never inlined, so it is read, and locked, once.
 * - `decided` applies the rules of rotationStep (internal/lifecycle.ts) to those rows; the
 *   adapter checks that both agree.
 * - `revoked` and `spent` write only the rows `locked` holds, and find them by primary key: the
 *   snapshot's version when nothing changed since, else (READ COMMITTED again) the newest
 *   version, which this statement has locked, with the WHERE re-checked on it. Never by ctid:
 *   the newest version may be invisible to the snapshot. Each row is written at most once.
 * - `issued` inserts the new token only once the old one is spent. A taken `newHash` fails the
 *   whole statement, the spend included.
 */
function rotationSql(forClient: boolean): string {
  return `
  WITH locked AS (
    ${TOKEN_FAMILY_SELECT}${forClient ? ' AND f.client_id = $5' : ''}
    FOR NO KEY UPDATE OF t, f
  ),
  decided AS (
    SELECT locked.*, CASE
        WHEN expires_at <= $3::bigint THEN 'inactive'
        WHEN token_spent_at IS NOT NULL THEN 'reuse'
        WHEN revoked_at IS NOT NULL THEN 'inactive'
        ELSE 'rotate'
      END AS step
    FROM locked
  ),
  revoked AS (
    UPDATE refresh_families AS f SET revoked_at = $3::bigint
    FROM decided AS d
    WHERE d.step = 'reuse' AND f.tenant = d.tenant AND f.family_id = d.family_id
      AND f.revoked_at IS NULL
    RETURNING f.revoked_at
  ),
  spent AS (
    UPDATE refresh_tokens AS t SET spent_at = $3::bigint
    FROM decided AS d
    WHERE d.step = 'rotate' AND t.tenant = d.tenant AND t.token_hash = d.token_hash
      AND t.spent_at IS NULL
    RETURNING t.tenant, t.family_id
  ),
  issued AS (
    INSERT INTO refresh_tokens (tenant, token_hash, family_id, created_at, spent_at)
    SELECT tenant, $4::text, family_id, $3::bigint, NULL FROM spent
    RETURNING token_hash
  )
  SELECT decided.*,
    (SELECT count(*) FROM revoked)::int AS revoked_count,
    (SELECT count(*) FROM issued)::int AS issued_count
  FROM decided`
}

const ROTATE = rotationSql(false)
const ROTATE_FOR_CLIENT = rotationSql(true)

/** Consumes a live code: $1 tenant, $2 code hash, $3 now. */
const CONSUME_CODE = `UPDATE authorization_codes SET consumed_at = $3
  WHERE tenant = $1 AND code_hash = $2 AND consumed_at IS NULL AND expires_at > $3`

/**
 * CONSUME_CODE, then the family ($4 … $12, $14 sid, $15 auth_time) and its first token ($13,
 * none when NULL), in one statement. The INSERTs read the row the step before returned, so they run only for the
 * redemption that won; the token's foreign key is checked at the end of the statement, when its
 * family exists. Parameters are cast: in an INSERT … SELECT, an untyped one would be taken for
 * text.
 */
const REDEEM_CODE = `
  WITH consumed AS (
    ${CONSUME_CODE}
    RETURNING tenant
  ),
  family AS (
    INSERT INTO refresh_families (${FAMILY_COLUMNS})
    SELECT tenant, $4::text, $5::text, $6::text, $7::text, $8::json, $9::text, $14::text,
      $15::bigint, $10::bigint, $11::bigint, $12::bigint
    FROM consumed
    RETURNING tenant, family_id
  ),
  token AS (
    INSERT INTO refresh_tokens (tenant, token_hash, family_id, created_at, spent_at)
    SELECT tenant, $13::text, family_id, $3::bigint, NULL FROM family WHERE $13::text IS NOT NULL
    RETURNING token_hash
  )
  SELECT (SELECT count(*) FROM consumed)::int AS redeemed`

/**
 * A new session ($1 … $9, in SESSION_COLUMNS order), and the end of the one it replaces ($10,
 * none when NULL) at its createdAt, in one statement: a taken idHash fails both. The UPDATE
 * keeps the time a session first ended.
 */
const CREATE_SESSION = `
  WITH replaced AS (
    UPDATE sessions SET ended_at = $7::bigint
    WHERE tenant = $1::text AND id_hash = $10::text AND ended_at IS NULL
  )
  INSERT INTO sessions (${SESSION_COLUMNS})
  VALUES ($1::text, $2::text, $3::text, $4::text, $5::json, $6::bigint, $7::bigint, $8::bigint,
    $9::bigint)`

/**
 * The three steps of a logout ($1 tenant, $2 sid, $3 now), run in this order in one transaction,
 * each its own statement. Under READ COMMITTED every statement takes a new snapshot; that is
 * what makes a concurrent redemption of a code of the sid (REDEEM_CODE, one statement that locks
 * the code's row, then inserts the family) end one of two ways:
 *
 * - the logout's UPDATE of the code comes first: the redemption waits on the row lock, then
 *   re-checks its WHERE on the committed row, finds it consumed, and creates nothing;
 * - the redemption locks the code first: the logout's UPDATE waits for it to commit, then finds
 *   the code consumed and skips it. The family was committed with it, before the next statement
 *   began, so REVOKE_SID_FAMILIES, a later statement with a later snapshot, sees it and revokes it.
 *
 * Revoking families in the same statement as consuming codes (one snapshot) would miss that
 * family; so would revoking them first.
 */
const END_SID_SESSIONS = `UPDATE sessions SET ended_at = $3
  WHERE tenant = $1 AND sid = $2 AND ended_at IS NULL
  RETURNING expires_at`
const CONSUME_SID_CODES = `UPDATE authorization_codes SET consumed_at = $3
  WHERE tenant = $1 AND sid = $2 AND consumed_at IS NULL`
const REVOKE_SID_FAMILIES = `UPDATE refresh_families SET revoked_at = $3
  WHERE tenant = $1 AND sid = $2 AND revoked_at IS NULL`

/**
 * Inserts the entries of $1 (keys) and $2 (values), stamped $3, in one statement, so in one
 * transaction and one round trip. The keys come sorted (see parsedConfigToAdd) and are inserted
 * in that order: two replicas adding the same keys at once then wait on each other's rows in
 * one order, and never deadlock. A key another transaction is writing is waited for, then
 * written again (the keys are deduplicated first: one statement may not update a row twice).
 */
const ADD_PARSED_CONFIG = `
  INSERT INTO parsed_config ("key", value, stored_at)
  SELECT k, v, $3::bigint FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS added(k, v, n)
  ORDER BY n
  ON CONFLICT ("key") DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at`

/** A refused reservation, thrown to roll its transaction back. */
/** The most statements one store prepares (see statementName); it runs about 30. */
const PREPARED_LIMIT = 100

/** Runs one statement; on a pool, on a transaction's client, with the same parameter checks. */
type Sql = <R extends QueryResultRow = QueryResultRow>(
  text: string,
  values?: readonly unknown[],
) => Promise<QueryResult<R>>

/** UTF-8 for a BYTEA column (see PG_MIGRATIONS). */
function utf8(text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

function closedError(cause?: unknown): StoreError {
  return new StoreError(
    'ERR_STORE_CLOSED',
    'the PostgreSQL store is closed',
    cause === undefined ? undefined : { cause },
  )
}

function createPostgresStore(pool: Pool, target: PgTarget): Store {
  let ended: Promise<void> | undefined
  const statementNames = new Map<string, string>()

  function sqlOn(method: string, runner: Pool | PoolClient): Sql {
    return (text, values = []) => {
      for (const value of values) {
        // PostgreSQL TEXT cannot hold U+0000; the columns that must (state, throttle keys) are
        // BYTEA and get Buffers. Refused here, like a lone surrogate, rather than by the server.
        if (typeof value === 'string' && value.includes('\u0000')) {
          throw new TypeError(`${method}: PostgreSQL cannot store a string containing U+0000`)
        }
      }
      return runner.query({ name: statementName(text), text, values: values as unknown[] })
    }
  }

  /**
   * The name each statement is prepared under, so that a connection parses and plans it once,
   * not on every call: parsing and planning cost as much as a round trip for a join, and twice
   * that for a rotation's CTEs. Every text is a constant of this file, so the names stay few;
   * past PREPARED_LIMIT (a text built from data, which there should never be) statements run
   * unnamed. Names are per connection, and node-postgres prepares each on first use.
   */
  function statementName(text: string): string | undefined {
    let name = statementNames.get(text)
    if (name === undefined && statementNames.size < PREPARED_LIMIT) {
      name = `tessera_${statementNames.size + 1}`
      statementNames.set(text, name)
    }
    return name
  }

  /** Runs one operation: refused once closed, with driver errors translated. */
  async function run<T>(method: string, body: (sql: Sql) => Promise<T>): Promise<T> {
    if (ended !== undefined) throw closedError()
    try {
      return await body(sqlOn(method, pool))
    } catch (error) {
      const translated = translateError(target, error)
      // An operation caught by close() fails for that reason, whatever the pool says.
      const lost =
        translated instanceof StoreError
          ? translated.code === 'ERR_STORE_UNAVAILABLE'
          : !(translated instanceof TypeError)
      throw ended !== undefined && lost ? closedError(error) : translated
    }
  }

  /**
   * Runs `body` in one transaction on one connection (READ COMMITTED), inside `run`: committed
   * if it returns, rolled back if it throws. A connection whose rollback fails is discarded.
   */
  async function transaction<T>(method: string, body: (sql: Sql) => Promise<T>): Promise<T> {
    const client = await pool.connect()
    // Between two statements the client is checked out and has no listener of the pool's; a
    // connection error then must not become an uncaught exception (the next query fails).
    const ignore = (): void => undefined
    client.on('error', ignore)
    let broken: Error | undefined
    try {
      await client.query('BEGIN')
      const result = await body(sqlOn(method, client))
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error('rollback failed')
      })
      throw error
    } finally {
      client.off('error', ignore)
      client.release(broken)
    }
  }

  const keys: KeyStore = {
    listKeys(tenant): Promise<StoredKey[]> {
      return run('listKeys', async (sql) => {
        const { rows } = await sql(
          `SELECT ${KEY_COLUMNS} FROM keys WHERE tenant = $1 ORDER BY created_at, kid`,
          [tenant],
        )
        return rows.map(parseKeyRow)
      })
    },
    insertKeyIfAbsent(key) {
      return run('insertKeyIfAbsent', async (sql) => {
        // DO NOTHING for the (tenant, kid) conflict only: that is the expected race between
        // replicas; any other constraint failure must still throw.
        const { rowCount } = await sql(
          `INSERT INTO keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (tenant, kid) DO NOTHING`,
          [
            key.tenant,
            key.kid,
            key.alg,
            key.publicJwk,
            key.privateKey,
            key.createdAt,
            key.state,
            key.retiredAt ?? null,
            key.signsFrom ?? null,
          ],
        )
        return rowCount === 1
      })
    },
    updateKeyState(tenant, kid, state, retiredAt) {
      return run('updateKeyState', async (sql) => {
        await sql('UPDATE keys SET state = $1, retired_at = $2 WHERE tenant = $3 AND kid = $4', [
          state,
          retiredAt ?? null,
          tenant,
          kid,
        ])
      })
    },
    retireKey(tenant, kid, retiredAt) {
      return run('retireKey', async (sql) => {
        const { rowCount } = await sql(
          `UPDATE keys SET state = 'retired', retired_at = $1
           WHERE tenant = $2 AND kid = $3 AND state = 'active'`,
          [retiredAt, tenant, kid],
        )
        return rowCount === 1
      })
    },
    updatePrivateKey(tenant, kid, current, next) {
      return run('updatePrivateKey', async (sql) => {
        const { rowCount } = await sql(
          'UPDATE keys SET private_key = $1 WHERE tenant = $2 AND kid = $3 AND private_key = $4',
          [next, tenant, kid, current],
        )
        return rowCount === 1
      })
    },
    deleteKey(tenant, kid) {
      return run('deleteKey', async (sql) => {
        // One statement: a key is never gone without its kid being remembered.
        await sql(
          `WITH gone AS (DELETE FROM keys WHERE tenant = $1 AND kid = $2 RETURNING tenant, kid)
           INSERT INTO pruned_kids (tenant, kid) SELECT tenant, kid FROM gone
           ON CONFLICT DO NOTHING`,
          [tenant, kid],
        )
      })
    },
    listPrunedKids(tenant) {
      return run('listPrunedKids', async (sql) => {
        const { rows } = await sql('SELECT kid FROM pruned_kids WHERE tenant = $1 ORDER BY kid', [
          tenant,
        ])
        return rows.map(parsePrunedKidRow)
      })
    },
    listKeysOfTenants(tenants) {
      return run('listKeysOfTenants', async (sql) => {
        checkTenantNames('listKeysOfTenants', tenants)
        const { rows } = await sql(
          `SELECT ${KEY_COLUMNS} FROM keys WHERE tenant = ANY($1::text[])
           ORDER BY tenant, created_at, kid`,
          [[...tenants]],
        )
        return rows.map(parseKeyRow)
      })
    },
    keyChangeCursor() {
      return run('keyChangeCursor', async (sql) => {
        const { rows } = await sql('SELECT seq FROM key_change_counter WHERE id = 1', [])
        return parseKeyCursorRow(rows[0])
      })
    },
    keyChangesSince(cursor) {
      return run('keyChangesSince', async (sql) => {
        checkCursor('keyChangesSince', cursor)
        const { rows } = await sql('SELECT tenant, seq FROM key_changes WHERE seq > $1', [cursor])
        return keyChangesOf(cursor, rows)
      })
    },
  }

  const throttle = pgThrottle({ run, transaction })

  const codes: AuthorizationCodeStore = {
    saveCode(code, options) {
      return run('saveCode', async (sql) => {
        checkCode('saveCode', code)
        const keep = codesToKeep(code, options)
        const insert = `INSERT INTO authorization_codes (${CODE_COLUMNS})
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`
        // One statement: the DELETE does not see the row being inserted, so it keeps `keep`
        // older codes of the session and client, and the new one makes keepPerSession.
        const bounded = `WITH saved AS (${insert} RETURNING 1)
          DELETE FROM authorization_codes
          WHERE tenant = $1 AND sid = $13 AND client_id = $3 AND consumed_at IS NULL
            AND code_hash <> $2 AND code_hash NOT IN (SELECT code_hash FROM authorization_codes
              WHERE tenant = $1 AND sid = $13 AND client_id = $3 AND consumed_at IS NULL
                AND code_hash <> $2
              ORDER BY created_at DESC LIMIT $15)`
        await sql(keep === undefined ? insert : bounded, [
          code.tenant,
          code.codeHash,
          code.clientId,
          code.redirectUri,
          code.codeChallenge ?? null,
          code.scope,
          code.sub,
          JSON.stringify(code.claims),
          code.createdAt,
          code.expiresAt,
          code.consumedAt ?? null,
          code.nonce === undefined ? null : utf8(code.nonce),
          code.sid ?? null,
          code.authTime ?? null,
          ...(keep === undefined ? [] : [keep]),
        ])
      })
    },
    findCode(tenant, codeHash) {
      return run('findCode', async (sql) => {
        const { rows } = await sql(
          `SELECT ${CODE_COLUMNS} FROM authorization_codes WHERE tenant = $1 AND code_hash = $2`,
          [tenant, codeHash],
        )
        return rows.length === 0 ? undefined : parseCodeRow(rows[0])
      })
    },
    redeemCode(tenant, codeHash, now, issue) {
      // A conditional UPDATE is the whole decision: of concurrent redemptions, on any replica,
      // the first to update the row wins; the others wait on its row lock, then see consumed_at
      // set (READ COMMITTED re-checks the WHERE on the committed row) and change nothing. Only
      // the winner creates the family, in the same statement (REDEEM_CODE), so a failed INSERT
      // also undoes the consumption.
      return run('redeemCode', async (sql) => {
        checkRedeemArgs(tenant, now, issue)
        if (issue === undefined) {
          return (await sql(CONSUME_CODE, [tenant, codeHash, now])).rowCount === 1
        }
        const { family } = issue
        const { rows } = await sql<Record<string, unknown>>(REDEEM_CODE, [
          tenant,
          codeHash,
          now,
          family.familyId,
          family.clientId,
          family.sub,
          family.scope,
          JSON.stringify(family.claims),
          family.codeHash ?? null,
          family.createdAt,
          family.expiresAt,
          family.revokedAt ?? null,
          issue.tokenHash ?? null,
          family.sid ?? null,
          family.authTime ?? null,
        ])
        return rows[0]?.redeemed === 1
      })
    },
  }

  /**
   * One rotation, one statement (see rotationSql): no transaction to open and commit around it,
   * so one round trip where BEGIN, SELECT … FOR NO KEY UPDATE, UPDATE, INSERT and COMMIT took
   * five. The statement is its own transaction: a failure anywhere undoes all of it.
   */
  function rotate(
    method: string,
    tenant: string,
    oldHash: string,
    newHash: string,
    now: number,
    clientId?: string,
  ): Promise<RotateResult> {
    return run(method, async (sql): Promise<RotateResult> => {
      checkTime(method, 'now', now)
      checkText(method, 'newHash', newHash)
      const { rows } =
        clientId === undefined
          ? await sql<Record<string, unknown>>(ROTATE, [tenant, oldHash, now, newHash])
          : await sql<Record<string, unknown>>(ROTATE_FOR_CLIENT, [
              tenant,
              oldHash,
              now,
              newHash,
              clientId,
            ])
      const row = rows[0]
      if (row === undefined) return { status: 'not_found' }
      // The rows as locked, before this statement's writes. The statement applies the rules of
      // rotationStep, and under its row locks every write the step needs succeeds: should the
      // two ever disagree, that is a bug to report, not an outcome.
      const { token, family } = parseTokenFamilyRow(row)
      const step = rotationStep(token, family, now)
      const revoked = step === 'reuse' && family.revokedAt === undefined ? 1 : 0
      const issued = step === 'rotate' ? 1 : 0
      if (row.step !== step || row.revoked_count !== revoked || row.issued_count !== issued) {
        throw new Error(`${method}: the statement did not do what rotationStep decided (${step})`)
      }
      switch (step) {
        case 'inactive':
          return { status: 'inactive', family }
        case 'reuse':
          family.revokedAt ??= now
          return { status: 'reused', family }
        case 'rotate':
          return { status: 'rotated', family }
      }
    })
  }

  const refreshTokens: RefreshTokenStore = {
    findRefreshToken(tenant, tokenHash) {
      return run('findRefreshToken', async (sql) => {
        const { rows } = await sql(TOKEN_FAMILY_SELECT, [tenant, tokenHash])
        return rows.length === 0 ? undefined : parseTokenFamilyRow(rows[0])
      })
    },
    rotateRefreshToken(tenant, oldHash, newHash, now) {
      return rotate('rotateRefreshToken', tenant, oldHash, newHash, now)
    },
    // With a client, a token of another client is as unknown as a made-up one: nothing changes.
    rotateRefreshTokenForClient(tenant, clientId, oldHash, newHash, now) {
      return rotate('rotateRefreshTokenForClient', tenant, oldHash, newHash, now, clientId)
    },
    findFamily(tenant, familyId) {
      return run('findFamily', async (sql) => {
        const { rows } = await sql(
          `SELECT ${FAMILY_COLUMNS} FROM refresh_families WHERE tenant = $1 AND family_id = $2`,
          [tenant, familyId],
        )
        return rows.length === 0 ? undefined : parseFamilyRow(rows[0])
      })
    },
    revokeFamily(tenant, familyId, now) {
      return run('revokeFamily', async (sql) => {
        checkTime('revokeFamily', 'now', now)
        // A family keeps the time of its first revocation.
        await sql(
          `UPDATE refresh_families SET revoked_at = $3
           WHERE tenant = $1 AND family_id = $2 AND revoked_at IS NULL`,
          [tenant, familyId, now],
        )
      })
    },
    revokeFamiliesByCode(tenant, codeHash, now) {
      return run('revokeFamiliesByCode', async (sql) => {
        checkTime('revokeFamiliesByCode', 'now', now)
        await sql(
          `UPDATE refresh_families SET revoked_at = $3
           WHERE tenant = $1 AND code_hash = $2 AND revoked_at IS NULL`,
          [tenant, codeHash, now],
        )
      })
    },
  }

  const marks: MarkStore = {
    mark(tenant, kind, id, expiresAt, now) {
      // One statement decides: a new mark is inserted, an expired one set again, a live one left
      // alone. Concurrent calls for one mark, on any replica, queue on its row (or on the
      // uncommitted insert of it); each one after the first re-checks the DO UPDATE's WHERE on
      // the committed row, finds it live, and changes nothing.
      return run('mark', async (sql) => {
        checkMarkArgs('mark', tenant, kind, id, now)
        checkTime('mark', 'expiresAt', expiresAt)
        const { rowCount } = await sql(
          `INSERT INTO marks (tenant, kind, id, expires_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant, kind, id) DO UPDATE SET expires_at = EXCLUDED.expires_at
             WHERE marks.expires_at <= $5`,
          [tenant, kind, utf8(id), expiresAt, now],
        )
        return rowCount === 1
      })
    },
    isMarked(tenant, kind, id, now) {
      return run('isMarked', async (sql) => {
        checkMarkArgs('isMarked', tenant, kind, id, now)
        const { rowCount } = await sql(
          `SELECT 1 FROM marks
           WHERE tenant = $1 AND kind = $2 AND id = $3 AND expires_at > $4`,
          [tenant, kind, utf8(id), now],
        )
        return rowCount === 1
      })
    },
  }

  const secrets: SecretStore = {
    getOrCreateSecret(name, candidate) {
      return run('getOrCreateSecret', async (sql) => {
        checkSecretArgs(name, candidate)
        const inserted = await sql(
          `INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING
           RETURNING value`,
          [name, candidate],
        )
        if (inserted.rows.length === 1) return parseSecretRow(inserted.rows[0])
        // A separate statement: its snapshot, unlike the INSERT's, includes the row of the
        // replica that won (the INSERT waited for it to commit, then did nothing).
        const { rows } = await sql('SELECT value FROM secrets WHERE name = $1', [name])
        return parseSecretRow(rows[0])
      })
    },
  }

  const sessions: SessionStore = {
    createSession(session, replaces) {
      return run('createSession', async (sql) => {
        checkSession(session, replaces)
        await sql(CREATE_SESSION, [
          session.tenant,
          session.idHash,
          session.sid,
          session.sub,
          JSON.stringify(session.claims),
          session.authTime,
          session.createdAt,
          session.expiresAt,
          session.endedAt ?? null,
          replaces ?? null,
        ])
      })
    },
    findSession(tenant, idHash) {
      return run('findSession', async (sql) => {
        const { rows } = await sql(
          `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant = $1 AND id_hash = $2`,
          [tenant, idHash],
        )
        return rows.length === 0 ? undefined : parseSessionRow(rows[0])
      })
    },
    endSession(tenant, sid, now) {
      return run('endSession', async () => {
        checkEndSessionArgs(tenant, sid, now)
        return transaction('endSession', async (tx) => {
          const args = [tenant, sid, now]
          const { rows } = await tx(END_SID_SESSIONS, args)
          await tx(CONSUME_SID_CODES, args)
          await tx(REVOKE_SID_FAMILIES, args)
          return rows.map(parseSessionEnd).some((expiresAt) => expiresAt > now)
        })
      })
    },
  }

  const expiry: ExpiryStore = {
    purgeExpired(now) {
      return run('purgeExpired', () => {
        checkTime('purgeExpired', 'now', now)
        const deletes: [string, number][] = [
          // Sessions first: a logout locks the rows of a sid in the order sessions, codes,
          // families, and a purge that took codes first could cross it.
          ['DELETE FROM sessions WHERE expires_at <= $1 OR ended_at <= $1', now],
          ['DELETE FROM authorization_codes WHERE expires_at <= $1', now - CODE_RETENTION_MS],
          // Nothing writes login_transactions (login forms are sealed, not stored); this empties
          // the rows of databases older than that.
          ['DELETE FROM login_transactions WHERE expires_at <= $1', now],
          // Deleted explicitly, not left to ON DELETE CASCADE, so that they are counted.
          [
            `DELETE FROM refresh_tokens WHERE (tenant, family_id) IN
               (SELECT tenant, family_id FROM refresh_families WHERE expires_at <= $1)`,
            now,
          ],
          ['DELETE FROM refresh_families WHERE expires_at <= $1', now],
          // Rows a reservation or settlement holds are skipped (and purged next time): those lock
          // several rows in one order, which a purge's own order could cross.
          [
            `DELETE FROM throttle WHERE "key" IN (SELECT "key" FROM throttle WHERE reset_at <= $1
               FOR UPDATE SKIP LOCKED)`,
            now,
          ],
          [PURGE_HOLDS, now],
          [PG_PURGE_CLIENT_AUTH_FAILURES, now],
          ['DELETE FROM marks WHERE expires_at <= $1', now],
        ]
        return transaction('purgeExpired', async (tx) => {
          // Replicas purge on their own timers; one at a time, so that two purges never lock
          // the same rows in different orders. The one that waited finds little left to do.
          await tx('SELECT pg_advisory_xact_lock($1)', [PURGE_LOCK])
          let deleted = 0
          for (const [text, before] of deletes) deleted += (await tx(text, [before])).rowCount ?? 0
          return deleted
        })
      })
    },
  }

  const parsedConfig: ParsedConfigStore = {
    list() {
      return run('parsedConfig.list', async (sql) => {
        const { rows } = await sql('SELECT "key", value FROM parsed_config', [])
        return rows.map(parseParsedConfigRow)
      })
    },
    add(entries, now) {
      return run('parsedConfig.add', async (sql) => {
        const toAdd = parsedConfigToAdd(entries, now)
        if (toAdd.length === 0) return 0
        const { rowCount } = await sql(ADD_PARSED_CONFIG, [
          toAdd.map(({ key }) => key),
          toAdd.map(({ value }) => value),
          now,
        ])
        return rowCount ?? 0
      })
    },
    prune(keep, before) {
      return run('parsedConfig.prune', async (sql) => {
        const kept = parsedConfigToKeep(keep, before)
        const { rowCount } = await sql(
          `DELETE FROM parsed_config WHERE stored_at < $1 AND "key" <> ALL($2::text[])`,
          [before, kept],
        )
        return rowCount ?? 0
      })
    },
  }

  return {
    keys,
    throttle,
    clientAuthFailures: createPostgresFailureCounter({ run, transaction }),
    codes,
    refreshTokens,
    marks,
    secrets,
    sessions,
    expiry,
    parsedConfig,
    algorithms: createPostgresTenantAlgorithms(run),
    ping() {
      return run('ping', async (sql) => {
        await sql('SELECT 1')
      })
    },
    close() {
      ended ??= pool.end()
      return ended
    },
  }
}
