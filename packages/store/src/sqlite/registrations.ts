import type { ClientRegistrationStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'
import {
  parseRegisteredClientRow,
  REGISTERED_CLIENT_COLUMN_NAMES,
  REGISTERED_CLIENT_COLUMNS,
  registeredClientValues,
} from '../internal/tables/registered-clients.js'
import { insertOnce, type SqliteContext } from './context.js'

/** The registration store over the SQLite `registered_clients` table. */
export function createSqliteRegistrations({
  db,
  use,
  wrote,
}: SqliteContext): ClientRegistrationStore {
  // One statement counts the tenant's registrations and inserts the new one only while they are
  // fewer than the bound. SQLite runs a write statement under the database's one write lock, so
  // no registration from another connection or process commits between the count and the
  // insert: concurrent registrations never pass the bound. A taken client_id fails the INSERT.
  const insertIfRoom = db.prepare<[...unknown[]]>(
    `INSERT INTO registered_clients (${REGISTERED_CLIENT_COLUMNS})
     SELECT ${REGISTERED_CLIENT_COLUMN_NAMES.map(() => '?').join(', ')}
     WHERE (SELECT count(*) FROM registered_clients WHERE tenant = ?) < ?`,
  )
  const select = db.prepare<[string, string]>(
    `SELECT ${REGISTERED_CLIENT_COLUMNS} FROM registered_clients
     WHERE tenant = ? AND client_id = ?`,
  )
  // created_at and registration_token_hash stay as registered.
  const update = db.prepare<[string | null, string, number, string, string]>(
    `UPDATE registered_clients SET secret_hash = ?, metadata = ?, updated_at = ?
     WHERE tenant = ? AND client_id = ?`,
  )
  const remove = db.prepare<[string, string]>(
    'DELETE FROM registered_clients WHERE tenant = ? AND client_id = ?',
  )
  return {
    registerClient(record, max) {
      return settle(() => {
        use()
        let changes = 0
        insertOnce('the registered client', () => {
          changes = insertIfRoom.run(...registeredClientValues(record), record.tenant, max).changes
        })
        wrote()
        return changes === 1
      })
    },
    findRegisteredClient(tenant, clientId) {
      return settle(() => {
        use()
        const row = select.get(tenant, clientId)
        return row === undefined ? undefined : parseRegisteredClientRow(row)
      })
    },
    updateRegisteredClient(record) {
      return settle(() => {
        use()
        const { changes } = update.run(
          record.secretHash ?? null,
          JSON.stringify(record.metadata),
          record.updatedAt,
          record.tenant,
          record.clientId,
        )
        wrote()
        return changes === 1
      })
    },
    deleteRegisteredClient(tenant, clientId) {
      return settle(() => {
        use()
        const { changes } = remove.run(tenant, clientId)
        wrote()
        return changes === 1
      })
    },
  }
}
