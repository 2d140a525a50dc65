import { mkdir } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import type { FailureCount, ThrottleStore } from '@tessera/grants'
import type { KeyState, KeyStore, StoredKey } from '@tessera/keys'
import type Database from 'better-sqlite3'
import { StoreError } from './errors.js'
import type { Store } from './store.js'
import { checkThrottleArgs } from './internal/checks.js'
import { settle } from './internal/settle.js'
import { parseKeyRow, parseThrottleRow } from './internal/rows.js'
import { openDatabase } from './internal/sqlite-database.js'

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
      await mkdir(dirname(file), { recursive: true })
    } catch (cause) {
      throw new StoreError('ERR_STORE_OPEN', `cannot create the directory of ${file}`, { cause })
    }
  }
  return createSqliteStore(openDatabase(file))
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
}

function createSqliteStore(db: Database.Database): Store {
  const listKeys = db.prepare<[string]>(
    `SELECT tenant, kid, alg, public_jwk, private_key, created_at, state, retired_at
       FROM keys WHERE tenant = ? ORDER BY created_at, kid`,
  )
  // DO NOTHING, not OR IGNORE: only the (tenant, kid) conflict is the expected race; any other
  // constraint failure must still throw.
  const insertKey = db.prepare<KeyParams>(
    `INSERT INTO keys (tenant, kid, alg, public_jwk, private_key, created_at, state, retired_at)
     VALUES (@tenant, @kid, @alg, @publicJwk, @privateKey, @createdAt, @state, @retiredAt)
     ON CONFLICT (tenant, kid) DO NOTHING`,
  )
  const updateKeyState = db.prepare<[KeyState, number | null, string, string]>(
    'UPDATE keys SET state = ?, retired_at = ? WHERE tenant = ? AND kid = ?',
  )
  const deleteKey = db.prepare<[string, string]>('DELETE FROM keys WHERE tenant = ? AND kid = ?')

  const sweepWindows = db.prepare<[number]>('DELETE FROM throttle WHERE reset_at <= ?')
  // In DO UPDATE, bare column names are the stored row. A window that has ended restarts at 1.
  const countFailure = db.prepare<{ key: string; now: number; resetAt: number }>(
    `INSERT INTO throttle ("key", count, reset_at) VALUES (@key, 1, @resetAt)
     ON CONFLICT ("key") DO UPDATE SET
       count = CASE WHEN reset_at <= @now THEN 1 ELSE count + 1 END,
       reset_at = CASE WHEN reset_at <= @now THEN @resetAt ELSE reset_at END
     RETURNING count, reset_at`,
  )
  const readWindow = db.prepare<[string, number]>(
    'SELECT count, reset_at FROM throttle WHERE "key" = ? AND reset_at > ?',
  )
  const clearWindow = db.prepare<[string]>('DELETE FROM throttle WHERE "key" = ?')
  const select1 = db.prepare('SELECT 1')

  // IMMEDIATE takes the write lock up front, so the sweep and the count cannot interleave with
  // another process's; ended windows are dropped as failures come in, so guessed usernames do not
  // pile up.
  const recordFailure = db.transaction((key: string, now: number, windowMs: number) => {
    sweepWindows.run(now)
    return parseThrottleRow(countFailure.get({ key, now, resetAt: now + windowMs }))
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
    deleteKey(tenant, kid) {
      return settle(() => {
        use()
        deleteKey.run(tenant, kid)
      })
    },
  }

  const throttle: ThrottleStore = {
    recordFailure(key, now, windowMs): Promise<FailureCount> {
      return settle(() => {
        use()
        checkThrottleArgs('recordFailure', now, windowMs)
        return recordFailure.immediate(key, now, windowMs)
      })
    },
    getFailures(key, now) {
      return settle(() => {
        use()
        checkThrottleArgs('getFailures', now)
        const row = readWindow.get(key, now)
        return row === undefined ? { count: 0, resetAt: now } : parseThrottleRow(row)
      })
    },
    clearFailures(key) {
      return settle(() => {
        use()
        clearWindow.run(key)
      })
    },
  }

  return {
    keys,
    throttle,
    ping() {
      return settle(() => {
        use()
        select1.get()
      })
    },
    close() {
      return settle(() => {
        if (db.open) db.close()
      })
    },
  }
}
