import { chmod, mkdir, open } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import type {
  AuthorizationCodeStore,
  ExpiryStore,
  FamilyIssue,
  MarkStore,
  RefreshTokenStore,
  Reservation,
  RotateResult,
  SecretStore,
  SessionRecord,
  SessionStore,
  ThrottleStore,
} from '@tessera/grants'
import type { KeyState, KeyStore, StoredKey } from '@tessera/keys'
import Database from 'better-sqlite3'
import { createSqliteFailureCounter } from './client-auth-failures.js'
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
  checkReservation,
  checkSession,
  checkSettlement,
  checkTime,
  conflictError,
  parsedConfigToAdd,
  parsedConfigToKeep,
} from './internal/checks.js'
import { checkedStore } from './internal/checked-store.js'
import { codesToKeep } from './internal/code-bound.js'
import { CODE_RETENTION_MS, rotationStep } from './internal/lifecycle.js'
import { settle } from './internal/settle.js'
import { sqliteThrottle } from './internal/sqlite-throttle.js'
import { createSqliteTenantAlgorithms } from './internal/tenant-algorithms.js'
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
import { createCheckpointer, openDatabase } from './internal/sqlite-database.js'

const IN_MEMORY = ':memory:'

/**
 * Opens (creating if needed) an SQLite store: the embedded default, safe to share between
 * processes on one host. WAL mode, a 5 s busy timeout, and the schema migrated on open.
 *
 * @param path - a file path, relative to the working directory, whose directory is created if
 *   missing; or `:memory:` for a private in-memory database
 * @throws StoreError `ERR_STORE_OPEN` when the file cannot be created, opened or migrated
 * @example
 * ```ts
 * const store = await openSqliteStore('./data/tessera.db')
 * ```
 */
export async function openSqliteStore(path: string): Promise<Store> {
  if (typeof path !== 'string') throw new TypeError('openSqliteStore: path must be a string')
  if (path === '') {
    throw new StoreError(
      'ERR_STORE_URL',
      'sqlite: needs a file path, as in sqlite:./data/tessera.db',
    )
  }
  const file = path === IN_MEMORY ? path : resolve(path)
  if (file !== IN_MEMORY) {
    try {
      await createPrivateDirectory(dirname(file))
    } catch (cause) {
      throw new StoreError('ERR_STORE_OPEN', `cannot create the directory of ${file}`, { cause })
    }
    try {
      await createPrivateFile(file)
    } catch (cause) {
      throw new StoreError('ERR_STORE_OPEN', `cannot create the SQLite database ${file}`, { cause })
    }
  }
  return checkedStore(createSqliteStore(openDatabase(file), file))
}

/**
 * Creates `dir` and its missing parents as 0700. The mode is set with chmod, not only asked of
 * mkdir, because mkdir's is filtered through the umask; directories that exist are left alone.
 */
async function createPrivateDirectory(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: 0o700 })
  if (first === undefined) return
  for (let created = dir; ; created = dirname(created)) {
    await chmod(created, 0o700)
    if (created === first || dirname(created) === created) return
  }
}

/**
 * Creates the database file as 0600 when it does not exist yet, so that SQLite opens a file no
 * other user can read: it would create it 0644 less the umask (world-readable under umask 000),
 * and it gives the -wal and -shm files it creates next to it the mode of the database file.
 * An existing file keeps its mode. O_EXCL: of two processes creating it at once, one does.
 */
async function createPrivateFile(file: string): Promise<void> {
  let handle: FileHandle
  try {
    handle = await open(file, 'wx', 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return
    throw error
  }
  try {
    await handle.chmod(0o600)
  } finally {
    await handle.close()
  }
}

interface KeyParams {
  tenant: string
  kid: string
  alg: string
  publicJwk: string
  privateKey: string
  createdAt: number
  state: KeyState
  retiredAt: number | null
  signsFrom: number | null
}

interface CodeParams {
  tenant: string
  codeHash: string
  clientId: string
  redirectUri: string
  codeChallenge: string | null
  scope: string
  sub: string
  claims: string
  createdAt: number
  expiresAt: number
  consumedAt: number | null
  nonce: string | null
  sid: string | null
  authTime: number | null
}

interface FamilyParams {
  tenant: string
  familyId: string
  clientId: string
  sub: string
  scope: string
  claims: string
  codeHash: string | null
  sid: string | null
  authTime: number | null
  createdAt: number
  expiresAt: number
  revokedAt: number | null
}

interface SessionParams {
  tenant: string
  idHash: string
  sid: string
  sub: string
  claims: string
  authTime: number
  createdAt: number
  expiresAt: number
  endedAt: number | null
}

const CODE_COLUMNS = `tenant, code_hash, client_id, redirect_uri, code_challenge, scope, sub, claims,
  created_at, expires_at, consumed_at, nonce, sid, auth_time`
const FAMILY_COLUMNS = `tenant, family_id, client_id, sub, scope, claims, code_hash, sid, auth_time,
  created_at, expires_at, revoked_at`
const SESSION_COLUMNS = `tenant, id_hash, sid, sub, claims, auth_time, created_at, expires_at,
  ended_at`

/** Runs an INSERT; a taken primary key becomes ERR_STORE_CONFLICT, anything else is rethrown. */
function insertOnce(what: string, insert: () => unknown): void {
  try {
    insert()
  } catch (cause) {
    if (cause instanceof Database.SqliteError && cause.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      throw conflictError(what, cause)
    }
    throw cause
  }
}

function createSqliteStore(db: Database.Database, file: string): Store {
  const checkpointer = createCheckpointer(db, file)
  const listKeys = db.prepare<[string]>(
    `SELECT tenant, kid, alg, public_jwk, private_key, created_at, state, retired_at, signs_from
       FROM keys WHERE tenant = ? ORDER BY created_at, kid`,
  )
  // DO NOTHING, not OR IGNORE: only the (tenant, kid) conflict is the expected race; any other
  // constraint failure must still throw.
  const insertKey = db.prepare<KeyParams>(
    `INSERT INTO keys (tenant, kid, alg, public_jwk, private_key, created_at, state, retired_at,
       signs_from)
     VALUES (@tenant, @kid, @alg, @publicJwk, @privateKey, @createdAt, @state, @retiredAt,
       @signsFrom)
     ON CONFLICT (tenant, kid) DO NOTHING`,
  )
  const updateKeyState = db.prepare<[KeyState, number | null, string, string]>(
    'UPDATE keys SET state = ?, retired_at = ? WHERE tenant = ? AND kid = ?',
  )
  const retireKey = db.prepare<[number, string, string]>(
    `UPDATE keys SET state = 'retired', retired_at = ?
     WHERE tenant = ? AND kid = ? AND state = 'active'`,
  )
  const updatePrivateKey = db.prepare<[string, string, string, string]>(
    'UPDATE keys SET private_key = ? WHERE tenant = ? AND kid = ? AND private_key = ?',
  )
  const deleteKeyRow = db.prepare<[string, string]>('DELETE FROM keys WHERE tenant = ? AND kid = ?')
  const recordPrunedKid = db.prepare<[string, string]>(
    'INSERT INTO pruned_kids (tenant, kid) VALUES (?, ?) ON CONFLICT DO NOTHING',
  )
  const listPrunedKids = db.prepare<[string]>(
    'SELECT kid FROM pruned_kids WHERE tenant = ? ORDER BY kid',
  )
  // The names as one JSON array parameter: any number of tenants, one statement.
  const listKeysOfTenants = db.prepare<[string]>(
    `SELECT tenant, kid, alg, public_jwk, private_key, created_at, state, retired_at, signs_from
       FROM keys WHERE tenant IN (SELECT value FROM json_each(?)) ORDER BY tenant, created_at, kid`,
  )
  const keyChangeCursor = db.prepare<[]>('SELECT seq FROM key_change_counter WHERE id = 1')
  const keyChangesSince = db.prepare<[number]>('SELECT tenant, seq FROM key_changes WHERE seq > ?')
  // One transaction: a key is never gone without its kid being remembered.
  const deleteKey = db.transaction((tenant: string, kid: string) => {
    if (deleteKeyRow.run(tenant, kid).changes === 1) recordPrunedKid.run(tenant, kid)
  })

  const throttleWrites = sqliteThrottle(db)
  const select1 = db.prepare('SELECT 1')

  const insertCode = db.prepare<CodeParams>(
    `INSERT INTO authorization_codes (${CODE_COLUMNS})
     VALUES (@tenant, @codeHash, @clientId, @redirectUri, @codeChallenge, @scope, @sub, @claims,
       @createdAt, @expiresAt, @consumedAt, @nonce, @sid, @authTime)`,
  )
  // The session's unconsumed codes of one client, other than @codeHash, beyond the newest @keep
  // (see saveCode).
  const trimSessionCodes = db.prepare<{
    tenant: string
    sid: string
    clientId: string
    codeHash: string
    keep: number
  }>(
    `DELETE FROM authorization_codes
     WHERE tenant = @tenant AND sid = @sid AND client_id = @clientId AND consumed_at IS NULL
       AND code_hash <> @codeHash AND code_hash NOT IN (SELECT code_hash FROM authorization_codes
         WHERE tenant = @tenant AND sid = @sid AND client_id = @clientId AND consumed_at IS NULL
           AND code_hash <> @codeHash
         ORDER BY created_at DESC LIMIT @keep)`,
  )
  const selectCode = db.prepare<[string, string]>(
    `SELECT ${CODE_COLUMNS} FROM authorization_codes WHERE tenant = ? AND code_hash = ?`,
  )
  const consumeCode = db.prepare<[number, string, string, number]>(
    `UPDATE authorization_codes SET consumed_at = ?
     WHERE tenant = ? AND code_hash = ? AND consumed_at IS NULL AND expires_at > ?`,
  )
  const insertFamily = db.prepare<FamilyParams>(
    `INSERT INTO refresh_families (${FAMILY_COLUMNS})
     VALUES (@tenant, @familyId, @clientId, @sub, @scope, @claims, @codeHash, @sid, @authTime,
       @createdAt, @expiresAt, @revokedAt)`,
  )
  // Positional parameters: on the refresh path, where named ones cost a microsecond more.
  const insertToken = db.prepare<[string, string, string, number]>(
    `INSERT INTO refresh_tokens (tenant, token_hash, family_id, created_at, spent_at)
     VALUES (?, ?, ?, ?, NULL)`,
  )
  // The token's own columns are prefixed so that they cannot shadow the family's.
  const selectToken = db.prepare<[string, string]>(
    `SELECT f.tenant, f.family_id, f.client_id, f.sub, f.scope, f.claims, f.code_hash, f.sid,
       f.auth_time, f.created_at, f.expires_at, f.revoked_at,
       t.token_hash, t.created_at AS token_created_at, t.spent_at AS token_spent_at
     FROM refresh_tokens AS t
     JOIN refresh_families AS f ON f.tenant = t.tenant AND f.family_id = t.family_id
     WHERE t.tenant = ? AND t.token_hash = ?`,
  )
  const spendToken = db.prepare<[number, string, string]>(
    `UPDATE refresh_tokens SET spent_at = ?
     WHERE tenant = ? AND token_hash = ? AND spent_at IS NULL`,
  )
  const selectFamily = db.prepare<[string, string]>(
    `SELECT ${FAMILY_COLUMNS} FROM refresh_families WHERE tenant = ? AND family_id = ?`,
  )
  // A family keeps the time of its first revocation.
  const revokeFamily = db.prepare<[number, string, string]>(
    `UPDATE refresh_families SET revoked_at = ?
     WHERE tenant = ? AND family_id = ? AND revoked_at IS NULL`,
  )
  const revokeFamiliesByCode = db.prepare<[number, string, string]>(
    `UPDATE refresh_families SET revoked_at = ?
     WHERE tenant = ? AND code_hash = ? AND revoked_at IS NULL`,
  )
  const purgeCodes = db.prepare<[number]>('DELETE FROM authorization_codes WHERE expires_at <= ?')
  // Nothing writes login_transactions (login forms are sealed, not stored); this empties the
  // rows of databases older than that.
  const purgeLogins = db.prepare<[number]>('DELETE FROM login_transactions WHERE expires_at <= ?')
  // Deleted explicitly, not left to ON DELETE CASCADE, so that they are counted.
  const purgeTokens = db.prepare<[number]>(
    `DELETE FROM refresh_tokens WHERE (tenant, family_id) IN
       (SELECT tenant, family_id FROM refresh_families WHERE expires_at <= ?)`,
  )
  const purgeFamilies = db.prepare<[number]>('DELETE FROM refresh_families WHERE expires_at <= ?')
  const purgeMarks = db.prepare<[number]>('DELETE FROM marks WHERE expires_at <= ?')
  const purgeSessions = db.prepare<[number, number]>(
    'DELETE FROM sessions WHERE expires_at <= ? OR ended_at <= ?',
  )

  const insertSession = db.prepare<SessionParams>(
    `INSERT INTO sessions (${SESSION_COLUMNS})
     VALUES (@tenant, @idHash, @sid, @sub, @claims, @authTime, @createdAt, @expiresAt, @endedAt)`,
  )
  const selectSession = db.prepare<[string, string]>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND id_hash = ?`,
  )
  // A session keeps the time it first ended.
  const endReplacedSession = db.prepare<[number, string, string]>(
    `UPDATE sessions SET ended_at = ?
     WHERE tenant = ? AND id_hash = ? AND ended_at IS NULL`,
  )
  const endSessionsOfSid = db.prepare<[number, string, string]>(
    `UPDATE sessions SET ended_at = ?
     WHERE tenant = ? AND sid = ? AND ended_at IS NULL
     RETURNING expires_at`,
  )
  const consumeCodesOfSid = db.prepare<[number, string, string]>(
    `UPDATE authorization_codes SET consumed_at = ?
     WHERE tenant = ? AND sid = ? AND consumed_at IS NULL`,
  )
  const revokeFamiliesOfSid = db.prepare<[number, string, string]>(
    `UPDATE refresh_families SET revoked_at = ?
     WHERE tenant = ? AND sid = ? AND revoked_at IS NULL`,
  )

  // IMMEDIATE (see the callers): the write lock is held from the start, so no redemption of a
  // code of the sid, from any connection, falls between the steps.
  const createSession = db.transaction((session: SessionRecord, replaces: string | undefined) => {
    if (replaces !== undefined) {
      endReplacedSession.run(session.createdAt, session.tenant, replaces)
    }
    // A taken idHash throws and rolls the ending back too.
    insertOnce('the session', () =>
      insertSession.run({
        tenant: session.tenant,
        idHash: session.idHash,
        sid: session.sid,
        sub: session.sub,
        claims: JSON.stringify(session.claims),
        authTime: session.authTime,
        createdAt: session.createdAt,
        expiresAt: session.expiresAt,
        endedAt: session.endedAt ?? null,
      }),
    )
  })
  const endSession = db.transaction((tenant: string, sid: string, now: number): boolean => {
    const ended = endSessionsOfSid.all(now, tenant, sid).map(parseSessionEnd)
    consumeCodesOfSid.run(now, tenant, sid)
    revokeFamiliesOfSid.run(now, tenant, sid)
    return ended.some((expiresAt) => expiresAt > now)
  })

  function addToken(tenant: string, tokenHash: string, familyId: string, now: number): void {
    insertOnce('the refresh token', () => insertToken.run(tenant, tokenHash, familyId, now))
  }

  // Only the one call whose UPDATE changes the row goes on to create the family; a throw from
  // either INSERT rolls the consumption back too.
  const redeem = db.transaction(
    (tenant: string, codeHash: string, now: number, issue: FamilyIssue | undefined): boolean => {
      if (consumeCode.run(now, tenant, codeHash, now).changes !== 1) return false
      if (issue !== undefined) {
        const { family } = issue
        insertOnce('the refresh family', () =>
          insertFamily.run({
            tenant: family.tenant,
            familyId: family.familyId,
            clientId: family.clientId,
            sub: family.sub,
            scope: family.scope,
            claims: JSON.stringify(family.claims),
            codeHash: family.codeHash ?? null,
            sid: family.sid ?? null,
            authTime: family.authTime ?? null,
            createdAt: family.createdAt,
            expiresAt: family.expiresAt,
            revokedAt: family.revokedAt ?? null,
          }),
        )
        if (issue.tokenHash !== undefined) addToken(tenant, issue.tokenHash, family.familyId, now)
      }
      return true
    },
  )

  // IMMEDIATE (see the callers): the read and the writes that depend on it hold the write lock
  // together, so another connection cannot spend the token in between.
  // With a clientId, a token of another client is as unknown as a made-up one: nothing changes.
  const rotate = db.transaction(
    (
      tenant: string,
      oldHash: string,
      newHash: string,
      now: number,
      clientId: string | undefined,
    ): RotateResult => {
      const row = selectToken.get(tenant, oldHash)
      if (row === undefined) return { status: 'not_found' }
      const { token, family } = parseTokenFamilyRow(row)
      if (clientId !== undefined && family.clientId !== clientId) return { status: 'not_found' }
      const reuse = (): RotateResult => {
        if (family.revokedAt === undefined) {
          revokeFamily.run(now, tenant, family.familyId)
          family.revokedAt = now
        }
        return { status: 'reused', family }
      }
      switch (rotationStep(token, family, now)) {
        case 'inactive':
          return { status: 'inactive', family }
        case 'reuse':
          return reuse()
        case 'rotate':
          // Cannot miss under the write lock; if it ever did, the token was spent: a reuse.
          if (spendToken.run(now, tenant, oldHash).changes !== 1) return reuse()
          addToken(tenant, newHash, family.familyId, now)
          return { status: 'rotated', family }
      }
    },
  )

  // Group commit. A rotation, a throttle reservation or a settlement is queued and run at the
  // end of the current turn of the event loop, together with every other one queued in that
  // turn, in one IMMEDIATE transaction: each in a savepoint of its own (a nested better-sqlite3
  // transaction), so one that throws is undone alone, and all are committed at once. Under load
  // most of the cost of one alone is the BEGIN and the COMMIT (locks and WAL writes), which the
  // batch shares. They run in the order they were asked, each sees those before it, and each
  // caller hears its answer only once the COMMIT has returned, so an answer is as durable as one
  // committed alone. No transaction stays open between turns, so no other call ever sees uncommitted rows.
  interface QueuedWrite {
    /** The write in a transaction of its own, when it is alone in its turn. */
    alone: () => unknown
    /** The write in a savepoint of the batch's transaction. */
    nested: () => unknown
    resolve: (result: unknown) => void
    reject: (error: unknown) => void
  }
  type Outcome = { result: unknown } | { error: unknown }
  let queued: QueuedWrite[] = []
  const runBatch = db.transaction((batch: readonly QueuedWrite[]): Outcome[] =>
    batch.map((item) => {
      try {
        return { result: item.nested() }
      } catch (error) {
        // Some errors (I/O, a full disk) make SQLite end the whole transaction: then nothing of
        // the batch is stored, and every write in it must fail, not just this one.
        if (!db.inTransaction) throw error
        return { error }
      }
    }),
  )
  function runQueuedWrites(): void {
    const batch = queued
    queued = []
    if (batch.length === 0) return
    let outcomes: Outcome[]
    try {
      use()
      // One write needs no savepoint.
      const [only] = batch
      outcomes =
        only !== undefined && batch.length === 1
          ? [{ result: only.alone() }]
          : runBatch.immediate(batch)
    } catch (error) {
      // BEGIN or COMMIT failed (or the single write threw): nothing of the batch is stored.
      for (const item of batch) item.reject(error)
      return
    }
    checkpointer.wrote()
    batch.forEach((item, index) => {
      const outcome = outcomes[index]
      if (outcome !== undefined && 'result' in outcome) item.resolve(outcome.result)
      else item.reject(outcome?.error)
    })
  }
  /**
   * Queues `write` (a better-sqlite3 transaction) with `args`; `check` runs first, and a throw
   * from it rejects the promise before anything is queued.
   */
  function queueWrite<A extends unknown[], T>(
    write: Database.Transaction<(...args: A) => T>,
    args: A,
    check: () => void,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      use()
      check()
      if (queued.length === 0) setImmediate(runQueuedWrites)
      queued.push({
        alone: () => write.immediate(...args),
        nested: () => write(...args),
        resolve: resolve as (result: unknown) => void,
        reject,
      })
    })
  }
  function queueRotation(
    method: string,
    args: [string, string, string, number, string | undefined],
  ): Promise<RotateResult> {
    return queueWrite(rotate, args, () => {
      checkTime(method, 'now', args[3])
      checkText(method, 'newHash', args[2])
    })
  }

  const clientAuthFailures = createSqliteFailureCounter(db, use)
  const purge = db.transaction((now: number): number => {
    return (
      purgeCodes.run(now - CODE_RETENTION_MS).changes +
      purgeLogins.run(now).changes +
      purgeTokens.run(now).changes +
      purgeFamilies.run(now).changes +
      throttleWrites.purge(now) +
      clientAuthFailures.sweep(now) +
      purgeMarks.run(now).changes +
      purgeSessions.run(now, now).changes
    )
  })

  function use(): void {
    if (!db.open) throw new StoreError('ERR_STORE_CLOSED', 'the SQLite store is closed')
  }

  const keys: KeyStore = {
    listKeys(tenant): Promise<StoredKey[]> {
      return settle(() => {
        use()
        return listKeys.all(tenant).map(parseKeyRow)
      })
    },
    insertKeyIfAbsent(key) {
      return settle(() => {
        use()
        const { changes } = insertKey.run({
          tenant: key.tenant,
          kid: key.kid,
          alg: key.alg,
          publicJwk: key.publicJwk,
          privateKey: key.privateKey,
          createdAt: key.createdAt,
          state: key.state,
          retiredAt: key.retiredAt ?? null,
          signsFrom: key.signsFrom ?? null,
        })
        return changes === 1
      })
    },
    updateKeyState(tenant, kid, state, retiredAt) {
      return settle(() => {
        use()
        updateKeyState.run(state, retiredAt ?? null, tenant, kid)
      })
    },
    retireKey(tenant, kid, retiredAt) {
      return settle(() => {
        use()
        return retireKey.run(retiredAt, tenant, kid).changes === 1
      })
    },
    updatePrivateKey(tenant, kid, current, next) {
      return settle(() => {
        use()
        return updatePrivateKey.run(next, tenant, kid, current).changes === 1
      })
    },
    deleteKey(tenant, kid) {
      return settle(() => {
        use()
        deleteKey.immediate(tenant, kid)
      })
    },
    listPrunedKids(tenant) {
      return settle(() => {
        use()
        return listPrunedKids.all(tenant).map(parsePrunedKidRow)
      })
    },
    listKeysOfTenants(tenants) {
      return settle(() => {
        use()
        checkTenantNames('listKeysOfTenants', tenants)
        return listKeysOfTenants.all(JSON.stringify(tenants)).map(parseKeyRow)
      })
    },
    keyChangeCursor() {
      return settle(() => {
        use()
        return parseKeyCursorRow(keyChangeCursor.get())
      })
    },
    keyChangesSince(cursor) {
      return settle(() => {
        use()
        checkCursor('keyChangesSince', cursor)
        return keyChangesOf(cursor, keyChangesSince.all(cursor))
      })
    },
  }

  const throttle: ThrottleStore = {
    reserveAttempts(asked, terms): Promise<Reservation> {
      return queueWrite(throttleWrites.reserve, [asked, terms], () =>
        checkReservation('reserveAttempts', asked, terms),
      )
    },
    settleAttempts(settlement, window) {
      return queueWrite(throttleWrites.settle, [settlement, window], () =>
        checkSettlement('settleAttempts', settlement, window),
      )
    },
  }

  const codes: AuthorizationCodeStore = {
    saveCode(code, options) {
      return settle(() => {
        use()
        checkCode('saveCode', code)
        const keep = codesToKeep(code, options)
        const insert = (): void =>
          insertOnce('the authorization code', () =>
            insertCode.run({
              tenant: code.tenant,
              codeHash: code.codeHash,
              clientId: code.clientId,
              redirectUri: code.redirectUri,
              codeChallenge: code.codeChallenge ?? null,
              scope: code.scope,
              sub: code.sub,
              claims: JSON.stringify(code.claims),
              createdAt: code.createdAt,
              expiresAt: code.expiresAt,
              consumedAt: code.consumedAt ?? null,
              nonce: code.nonce ?? null,
              sid: code.sid ?? null,
              authTime: code.authTime ?? null,
            }),
          )
        if (keep === undefined || code.sid === undefined) insert()
        else {
          const { tenant, sid, clientId, codeHash } = code
          db.transaction(() => {
            insert()
            trimSessionCodes.run({ tenant, sid, clientId, codeHash, keep })
          })()
        }
        checkpointer.wrote()
      })
    },
    findCode(tenant, codeHash) {
      return settle(() => {
        use()
        const row = selectCode.get(tenant, codeHash)
        return row === undefined ? undefined : parseCodeRow(row)
      })
    },
    redeemCode(tenant, codeHash, now, issue) {
      return settle(() => {
        use()
        checkRedeemArgs(tenant, now, issue)
        const redeemed = redeem.immediate(tenant, codeHash, now, issue)
        checkpointer.wrote()
        return redeemed
      })
    },
  }

  const refreshTokens: RefreshTokenStore = {
    findRefreshToken(tenant, tokenHash) {
      return settle(() => {
        use()
        const row = selectToken.get(tenant, tokenHash)
        return row === undefined ? undefined : parseTokenFamilyRow(row)
      })
    },
    rotateRefreshToken(tenant, oldHash, newHash, now) {
      return queueRotation('rotateRefreshToken', [tenant, oldHash, newHash, now, undefined])
    },
    rotateRefreshTokenForClient(tenant, clientId, oldHash, newHash, now) {
      return queueRotation('rotateRefreshTokenForClient', [tenant, oldHash, newHash, now, clientId])
    },
    findFamily(tenant, familyId) {
      return settle(() => {
        use()
        const row = selectFamily.get(tenant, familyId)
        return row === undefined ? undefined : parseFamilyRow(row)
      })
    },
    revokeFamily(tenant, familyId, now) {
      return settle(() => {
        use()
        checkTime('revokeFamily', 'now', now)
        revokeFamily.run(now, tenant, familyId)
      })
    },
    revokeFamiliesByCode(tenant, codeHash, now) {
      return settle(() => {
        use()
        checkTime('revokeFamiliesByCode', 'now', now)
        revokeFamiliesByCode.run(now, tenant, codeHash)
      })
    },
  }

  // One statement decides: a new mark is inserted, an expired one is set again, a live one is
  // left alone (the DO UPDATE's WHERE fails and nothing changes). SQLite runs it under the write
  // lock, so of concurrent calls, in any process, one changes a row.
  const setMark = db.prepare<{
    tenant: string
    kind: string
    id: string
    expiresAt: number
    now: number
  }>(
    `INSERT INTO marks (tenant, kind, id, expires_at) VALUES (@tenant, @kind, @id, @expiresAt)
     ON CONFLICT (tenant, kind, id) DO UPDATE SET expires_at = excluded.expires_at
       WHERE expires_at <= @now`,
  )
  const readMark = db.prepare<[string, string, string, number]>(
    'SELECT 1 FROM marks WHERE tenant = ? AND kind = ? AND id = ? AND expires_at > ?',
  )
  const selectSecret = db.prepare<[string]>('SELECT value FROM secrets WHERE name = ?')
  const insertSecret = db.prepare<[string, string]>(
    'INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
  )

  const marks: MarkStore = {
    mark(tenant, kind, id, expiresAt, now) {
      return settle(() => {
        use()
        checkMarkArgs('mark', tenant, kind, id, now)
        checkTime('mark', 'expiresAt', expiresAt)
        const { changes } = setMark.run({ tenant, kind, id, expiresAt, now })
        checkpointer.wrote()
        return changes === 1
      })
    },
    isMarked(tenant, kind, id, now) {
      return settle(() => {
        use()
        checkMarkArgs('isMarked', tenant, kind, id, now)
        return readMark.get(tenant, kind, id, now) !== undefined
      })
    },
  }

  const secrets: SecretStore = {
    getOrCreateSecret(name, candidate) {
      return settle(() => {
        use()
        checkSecretArgs(name, candidate)
        const stored = selectSecret.get(name)
        if (stored !== undefined) return parseSecretRow(stored)
        // Another process may insert first: then this does nothing, and the read gets its value.
        insertSecret.run(name, candidate)
        return parseSecretRow(selectSecret.get(name))
      })
    },
  }

  const sessions: SessionStore = {
    createSession(session, replaces) {
      return settle(() => {
        use()
        checkSession(session, replaces)
        createSession.immediate(session, replaces)
        checkpointer.wrote()
      })
    },
    findSession(tenant, idHash) {
      return settle(() => {
        use()
        const row = selectSession.get(tenant, idHash)
        return row === undefined ? undefined : parseSessionRow(row)
      })
    },
    endSession(tenant, sid, now) {
      return settle(() => {
        use()
        checkEndSessionArgs(tenant, sid, now)
        const ended = endSession.immediate(tenant, sid, now)
        checkpointer.wrote()
        return ended
      })
    },
  }

  const expiry: ExpiryStore = {
    purgeExpired(now) {
      return settle(() => {
        use()
        checkTime('purgeExpired', 'now', now)
        return purge.immediate(now)
      })
    },
  }

  const listParsedConfig = db.prepare<[]>('SELECT "key", value FROM parsed_config')
  const insertParsedConfig = db.prepare<[string, string, number]>(
    `INSERT INTO parsed_config ("key", value, stored_at) VALUES (?, ?, ?)
     ON CONFLICT ("key") DO UPDATE SET value = excluded.value, stored_at = excluded.stored_at`,
  )
  // The keys to keep as one JSON array parameter: a NOT IN list of tens of thousands of
  // parameters would pass SQLite's limit on variables.
  const pruneParsedConfig = db.prepare<[number, string]>(
    `DELETE FROM parsed_config
     WHERE stored_at < ? AND "key" NOT IN (SELECT value FROM json_each(?))`,
  )
  const addParsedConfig = db.transaction(
    (entries: readonly { key: string; value: string }[], now: number): number => {
      let inserted = 0
      for (const { key, value } of entries) {
        inserted += insertParsedConfig.run(key, value, now).changes
      }
      return inserted
    },
  )

  const parsedConfig: ParsedConfigStore = {
    list() {
      return settle(() => {
        use()
        return listParsedConfig.all().map(parseParsedConfigRow)
      })
    },
    add(entries, now) {
      return settle(() => {
        use()
        const toAdd = parsedConfigToAdd(entries, now)
        if (toAdd.length === 0) return 0
        // IMMEDIATE, like the other write transactions: the write lock is waited for at BEGIN.
        const inserted = addParsedConfig.immediate(toAdd, now)
        checkpointer.wrote()
        return inserted
      })
    },
    prune(keep, before) {
      return settle(() => {
        use()
        const kept = parsedConfigToKeep(keep, before)
        const { changes } = pruneParsedConfig.run(before, JSON.stringify(kept))
        checkpointer.wrote()
        return changes
      })
    },
  }

  return {
    keys,
    throttle,
    clientAuthFailures,
    codes,
    refreshTokens,
    marks,
    secrets,
    sessions,
    expiry,
    parsedConfig,
    algorithms: createSqliteTenantAlgorithms(db, use, () => checkpointer.wrote()),
    ping() {
      return settle(() => {
        use()
        select1.get()
      })
    },
    async close() {
      // Writes already asked for are answered, not dropped.
      if (db.open) runQueuedWrites()
      // The checkpointer's connection first: the last connection to close checkpoints the WAL
      // and removes it.
      await checkpointer.close()
      if (db.open) db.close()
    },
  }
}
