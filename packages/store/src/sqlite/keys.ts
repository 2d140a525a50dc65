import type { KeyState, KeyStore, StoredKey } from '@tessera/keys'
import { settle } from '../internal/settle.js'
import {
  KEY_COLUMN_NAMES,
  KEY_COLUMNS,
  keyChangesOf,
  keyValues,
  parseKeyCursorRow,
  parseKeyRow,
  parsePrunedKidRow,
} from '../internal/tables/keys.js'
import { placeholders, type SqliteContext } from './context.js'

/** The key store over the SQLite `keys`, `pruned_kids` and key-change tables. */
export function createSqliteKeys({ db, use }: SqliteContext): KeyStore {
  const listKeys = db.prepare<[string]>(
    `SELECT ${KEY_COLUMNS} FROM keys WHERE tenant = ? ORDER BY created_at, kid`,
  )
  // DO NOTHING, not OR IGNORE: only the (tenant, kid) conflict is the expected race; any other
  // constraint failure must still throw.
  const insertKey = db.prepare<[unknown[]]>(
    `INSERT INTO keys (${KEY_COLUMNS}) VALUES (${placeholders(KEY_COLUMN_NAMES)})
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
    `SELECT ${KEY_COLUMNS}
       FROM keys WHERE tenant IN (SELECT value FROM json_each(?)) ORDER BY tenant, created_at, kid`,
  )
  const keyChangeCursor = db.prepare<[]>('SELECT seq FROM key_change_counter WHERE id = 1')
  const keyChangesSince = db.prepare<[number]>('SELECT tenant, seq FROM key_changes WHERE seq > ?')
  // One transaction: a key is never gone without its kid being remembered.
  const deleteKey = db.transaction((tenant: string, kid: string) => {
    if (deleteKeyRow.run(tenant, kid).changes === 1) recordPrunedKid.run(tenant, kid)
  })

  return {
    listKeys(tenant): Promise<StoredKey[]> {
      return settle(() => {
        use()
        return listKeys.all(tenant).map(parseKeyRow)
      })
    },
    insertKeyIfAbsent(key) {
      return settle(() => {
        use()
        return insertKey.run(keyValues(key)).changes === 1
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
        return keyChangesOf(cursor, keyChangesSince.all(cursor))
      })
    },
  }
}
