import type { ConsentStore } from '@tessera/grants'
import { CONSENT_COLUMNS, consentValues, parseConsentRow } from '../internal/tables/consents.js'
import type { PgRunner } from './runner.js'

/** The consent store over the PostgreSQL `consents` table. */
export function createPostgresConsents({ run }: PgRunner): ConsentStore {
  return {
    saveConsent(consent) {
      // One statement: a later consent of the same key replaces the scopes and expiry of the
      // earlier one; concurrent saves of one key queue on its row, the last one wins.
      return run('saveConsent', async (sql) => {
        await sql(
          `INSERT INTO consents (${CONSENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (tenant, subject, client_id, resources)
             DO UPDATE SET scopes = EXCLUDED.scopes, expires_at = EXCLUDED.expires_at`,
          consentValues(consent),
        )
      })
    },
    findConsent(tenant, subject, clientId, resources, now) {
      return run('findConsent', async (sql) => {
        const { rows } = await sql(
          `SELECT ${CONSENT_COLUMNS} FROM consents
           WHERE tenant = $1 AND subject = $2 AND client_id = $3 AND resources = $4
             AND expires_at > $5`,
          [tenant, subject, clientId, resources, now],
        )
        return rows.length === 0 ? undefined : parseConsentRow(rows[0])
      })
    },
    deleteConsents(tenant, clientId) {
      return run('deleteConsents', async (sql) => {
        await sql('DELETE FROM consents WHERE tenant = $1 AND client_id = $2', [tenant, clientId])
      })
    },
  }
}
