import type { ConsentStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'
import {
  CONSENT_COLUMN_NAMES,
  CONSENT_COLUMNS,
  consentValues,
  parseConsentRow,
} from '../internal/tables/consents.js'
import { placeholders, type SqliteContext } from './context.js'

/** The consent store over the SQLite `consents` table. */
export function createSqliteConsents({ db, use, wrote }: SqliteContext): ConsentStore {
  // A later consent of the same key replaces the scopes and expiry of the earlier one.
  const upsert = db.prepare<[unknown[]]>(
    `INSERT INTO consents (${CONSENT_COLUMNS}) VALUES (${placeholders(CONSENT_COLUMN_NAMES)})
     ON CONFLICT (tenant, subject, client_id, resources)
       DO UPDATE SET scopes = excluded.scopes, expires_at = excluded.expires_at`,
  )
  const select = db.prepare<[string, string, string, string, number]>(
    `SELECT ${CONSENT_COLUMNS} FROM consents
     WHERE tenant = ? AND subject = ? AND client_id = ? AND resources = ? AND expires_at > ?`,
  )
  const removeOfClient = db.prepare<[string, string]>(
    'DELETE FROM consents WHERE tenant = ? AND client_id = ?',
  )
  return {
    saveConsent(consent) {
      return settle(() => {
        use()
        upsert.run(consentValues(consent))
        wrote()
      })
    },
    findConsent(tenant, subject, clientId, resources, now) {
      return settle(() => {
        use()
        const row = select.get(tenant, subject, clientId, resources, now)
        return row === undefined ? undefined : parseConsentRow(row)
      })
    },
    deleteConsents(tenant, clientId) {
      return settle(() => {
        use()
        removeOfClient.run(tenant, clientId)
        wrote()
      })
    },
  }
}
