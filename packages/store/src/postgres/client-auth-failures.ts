import type { FailureCounter, FailureRecord, FailureWindow } from '@tessera/grants'
import type { QueryResultRow } from 'pg'
import { parseWindow } from '../internal/tables/windows.js'
import type { PgRunner } from './runner.js'

const PG_FAILURES = `
  SELECT "key", count, reset_at FROM client_auth_failures
  WHERE "key" = ANY($1::text[]) AND reset_at > $2::bigint`

/**
 * Counts one failure on each key of $1 (sorted, so that concurrent calls lock rows in one
 * order) at $2 = now, opening windows that end at $3; a window that has ended restarts at 1.
 * The adapter compares the counts with the limits and rolls back when one is passed; until
 * then the rows stay locked, so concurrent calls of one key, from any replica, queue on them.
 */
const PG_RECORD = `
  INSERT INTO client_auth_failures ("key", count, reset_at)
  SELECT k, 1, $3::bigint FROM unnest($1::text[]) AS asked(k) ORDER BY k
  ON CONFLICT ("key") DO UPDATE SET
    count = CASE WHEN client_auth_failures.reset_at <= $2::bigint THEN 1
                 ELSE client_auth_failures.count + 1 END,
    reset_at = CASE WHEN client_auth_failures.reset_at <= $2::bigint THEN $3::bigint
                    ELSE client_auth_failures.reset_at END
  RETURNING "key", count, reset_at`

/** The purge statement of the PostgreSQL store: windows ended at $1, skipping locked rows. */
export const PG_PURGE_CLIENT_AUTH_FAILURES = `
  DELETE FROM client_auth_failures WHERE "key" IN
    (SELECT "key" FROM client_auth_failures WHERE reset_at <= $1 FOR UPDATE SKIP LOCKED)`

/** A refusal, thrown to roll the counts back. */
class Refused extends Error {
  constructor(readonly record: FailureRecord) {
    super('refused')
  }
}

function windowsByKey(rows: readonly QueryResultRow[]): Map<string, FailureWindow> {
  return new Map(rows.map((row) => [String(row.key), parseWindow(row)]))
}

/** The adapter over `client_auth_failures` of a PostgreSQL database. */
export function createPostgresFailureCounter(pg: PgRunner): FailureCounter {
  return {
    failures(keys, now) {
      return pg.run('failures', async (sql) => {
        const open = windowsByKey((await sql(PG_FAILURES, [keys, now])).rows)
        return keys.map((key) => open.get(key))
      })
    },
    recordFailure(keys, window) {
      return pg.run('recordFailure', async () => {
        const { now, windowMs } = window
        const names = keys.map(({ key }) => key)
        return pg
          .transaction('recordFailure', async (tx) => {
            const counted = windowsByKey((await tx(PG_RECORD, [names, now, now + windowMs])).rows)
            for (const { key, limit } of keys) {
              const open = counted.get(key)
              if (open === undefined) throw new Error('recordFailure: a key was not counted')
              if (open.count > limit) {
                throw new Refused({ recorded: false, blocked: key, resetAt: open.resetAt })
              }
            }
            return { recorded: true } satisfies FailureRecord
          })
          .catch((error: unknown) => {
            if (error instanceof Refused) return error.record
            throw error
          })
      })
    },
  }
}
