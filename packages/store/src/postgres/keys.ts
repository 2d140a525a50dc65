import type { KeyStore, StoredKey } from '@tessera/keys'
import {
  KEY_COLUMN_NAMES,
  KEY_COLUMNS,
  keyChangesOf,
  keyValues,
  parseKeyCursorRow,
  parseKeyRow,
  parsePrunedKidRow,
} from '../internal/tables/keys.js'
import { placeholders, type PgRunner } from './runner.js'

/** The key store over the PostgreSQL `keys`, `pruned_kids` and key-change tables. */
export function createPostgresKeys({ run }: PgRunner): KeyStore {
  return {
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
          `INSERT INTO keys (${KEY_COLUMNS}) VALUES (${placeholders(KEY_COLUMN_NAMES)})
           ON CONFLICT (tenant, kid) DO NOTHING`,
          keyValues(key),
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
        const { rows } = await sql('SELECT tenant, seq FROM key_changes WHERE seq > $1', [cursor])
        return keyChangesOf(cursor, rows)
      })
    },
  }
}
