import type { ExpiryStore } from '@tessera/grants'
import type { SweptFailureCounter } from '../client-auth-failures.js'
import { CODE_RETENTION_MS } from '../internal/lifecycle.js'
import { settle } from '../internal/settle.js'
import type { SqliteContext } from './context.js'
import type { SqliteThrottle } from './throttle.js'

/** The purge of every table's expired rows, in one IMMEDIATE transaction. */
export function createSqliteExpiry(
  { db, use }: SqliteContext,
  throttle: SqliteThrottle,
  clientAuthFailures: SweptFailureCounter,
): ExpiryStore {
  const purgeCodes = db.prepare<[number]>('DELETE FROM authorization_codes WHERE expires_at <= ?')
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
  const purgeConsents = db.prepare<[number]>('DELETE FROM consents WHERE expires_at <= ?')
  const purge = db.transaction((now: number): number => {
    return (
      purgeCodes.run(now - CODE_RETENTION_MS).changes +
      purgeTokens.run(now).changes +
      purgeFamilies.run(now).changes +
      throttle.purge(now) +
      clientAuthFailures.sweep(now) +
      purgeMarks.run(now).changes +
      purgeSessions.run(now, now).changes +
      purgeConsents.run(now).changes
    )
  })
  return {
    purgeExpired(now) {
      return settle(() => {
        use()
        return purge.immediate(now)
      })
    },
  }
}
