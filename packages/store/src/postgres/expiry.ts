import type { ExpiryStore } from '@tessera/grants'
import { CODE_RETENTION_MS } from '../internal/lifecycle.js'
import { PG_PURGE_CLIENT_AUTH_FAILURES } from './client-auth-failures.js'
import type { PgRunner } from './runner.js'
import { PURGE_HOLDS } from './throttle.js'

/**
 * The key of the advisory lock that serialises purges across replicas (see MIGRATION_LOCK).
 * ASCII "tess" + 2.
 */
const PURGE_LOCK = 0x7465_7373_02

/** The purge of every table's expired rows, in one transaction, one replica at a time. */
export function createPostgresExpiry({ run, transaction }: PgRunner): ExpiryStore {
  return {
    purgeExpired(now) {
      return run('purgeExpired', () => {
        const deletes: [string, number][] = [
          // Sessions first: a logout locks the rows of a sid in the order sessions, codes,
          // families, and a purge that took codes first could cross it.
          ['DELETE FROM sessions WHERE expires_at <= $1 OR ended_at <= $1', now],
          ['DELETE FROM authorization_codes WHERE expires_at <= $1', now - CODE_RETENTION_MS],
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
          ['DELETE FROM consents WHERE expires_at <= $1', now],
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
}
