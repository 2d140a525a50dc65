import type { ClientRegistrationStore } from '@tessera/grants'
import {
  parseRegisteredClientRow,
  REGISTERED_CLIENT_COLUMNS,
  registeredClientValues,
} from '../internal/tables/registered-clients.js'
import type { PgRunner } from './runner.js'

/**
 * The class of the per-tenant advisory locks of registerClient: the first key of the two-key
 * form, whose key space is apart from the one-key locks (MIGRATION_LOCK, PURGE_LOCK). ASCII
 * "tess" + 3 does not fit in an int4, so "tes" + 3.
 */
const REGISTRATION_LOCK_CLASS = 0x74_65_73_03

/**
 * A new registration ($1 … $7, in REGISTERED_CLIENT_COLUMNS order) while the tenant has fewer
 * than $8 registrations. Only correct under the lock (see registerClient).
 */
const INSERT_IF_ROOM = `
  INSERT INTO registered_clients (${REGISTERED_CLIENT_COLUMNS})
  SELECT $1::text, $2::text, $3::text, $4::text, $5::json, $6::bigint, $7::bigint
  WHERE (SELECT count(*) FROM registered_clients WHERE tenant = $1::text) < $8::bigint`

/** The registration store over the PostgreSQL `registered_clients` table. */
export function createPostgresRegistrations({
  run,
  transaction,
}: PgRunner): ClientRegistrationStore {
  return {
    registerClient(record, max) {
      // Counting and inserting in one statement is not enough under READ COMMITTED: two
      // transactions would both count max - 1 in their snapshots, and both insert (a new row
      // locks nothing another count would wait on). So registrations of a tenant queue on a
      // transaction-scoped advisory lock keyed by its name (two tenants whose names hash alike
      // merely share a queue), and count in a later statement: its snapshot is taken once the
      // lock is held, after the previous holder committed (a transaction becomes visible before
      // its locks are released), so it counts every registration that went before. Deletions
      // take no lock: one racing a registration can only make the count too high, never too low.
      return run('registerClient', () =>
        transaction('registerClient', async (sql) => {
          await sql('SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))', [
            REGISTRATION_LOCK_CLASS,
            record.tenant,
          ])
          const { rowCount } = await sql(INSERT_IF_ROOM, [...registeredClientValues(record), max])
          return rowCount === 1
        }),
      )
    },
    findRegisteredClient(tenant, clientId) {
      return run('findRegisteredClient', async (sql) => {
        const { rows } = await sql(
          `SELECT ${REGISTERED_CLIENT_COLUMNS} FROM registered_clients
           WHERE tenant = $1 AND client_id = $2`,
          [tenant, clientId],
        )
        return rows.length === 0 ? undefined : parseRegisteredClientRow(rows[0])
      })
    },
    updateRegisteredClient(record) {
      // created_at and registration_token_hash stay as registered.
      return run('updateRegisteredClient', async (sql) => {
        const { rowCount } = await sql(
          `UPDATE registered_clients SET secret_hash = $1, metadata = $2::json, updated_at = $3
           WHERE tenant = $4 AND client_id = $5`,
          [
            record.secretHash ?? null,
            JSON.stringify(record.metadata),
            record.updatedAt,
            record.tenant,
            record.clientId,
          ],
        )
        return rowCount === 1
      })
    },
    deleteRegisteredClient(tenant, clientId) {
      return run('deleteRegisteredClient', async (sql) => {
        const { rowCount } = await sql(
          'DELETE FROM registered_clients WHERE tenant = $1 AND client_id = $2',
          [tenant, clientId],
        )
        return rowCount === 1
      })
    },
  }
}
