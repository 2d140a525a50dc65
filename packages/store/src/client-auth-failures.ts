import type {
  FailureCounter,
  FailureLimit,
  FailureRecord,
  FailureWindow,
  ThrottleWindow,
} from '@tessera/grants'
import type Database from 'better-sqlite3'
import type { QueryResult, QueryResultRow } from 'pg'
import { parseWindow } from './internal/rows.js'
import { settle } from './internal/settle.js'

/**
 * The FailureCounter adapters (failed client authentications) of the SQLite and PostgreSQL
 * stores, and the refusal they share with the memory one. Their arguments are checked by
 * `checkedStore`, around every adapter.
 */

/** The first key whose open window already holds its limit, as a refusal. */
export function full(
  keys: readonly FailureLimit[],
  open: readonly (FailureWindow | undefined)[],
): FailureRecord | undefined {
  for (const [i, { key, limit }] of keys.entries()) {
    const window = open[i]
    if (window !== undefined && window.count >= limit) {
      return { recorded: false, blocked: key, resetAt: window.resetAt }
    }
  }
  return undefined
}

/** An adapter with the sweep of ended windows that its store's purge runs. */
export interface SweptFailureCounter extends FailureCounter {
  /** Deletes the windows ended at `now`; returns how many (SQLite: inside a transaction). */
  sweep(now: number): number
}

/** The adapter over `client_auth_failures` of an SQLite file; `use` throws once closed. */
export function createSqliteFailureCounter(
  db: Database.Database,
  use: () => void,
): SweptFailureCounter {
  const sweep = db.prepare<[number]>('DELETE FROM client_auth_failures WHERE reset_at <= ?')
  const select = db.prepare<[string, number]>(
    'SELECT count, reset_at FROM client_auth_failures WHERE "key" = ? AND reset_at > ?',
  )
  // Called after the sweep, under the write lock: a stored row is an open window.
  const count = db.prepare<[string, number]>(
    `INSERT INTO client_auth_failures ("key", count, reset_at) VALUES (?, 1, ?)
     ON CONFLICT ("key") DO UPDATE SET count = count + 1`,
  )
  const read = (keys: readonly string[], now: number): (FailureWindow | undefined)[] =>
    keys.map((key) => {
      const row = select.get(key, now)
      return row === undefined ? undefined : parseWindow(row)
    })
  // IMMEDIATE takes the write lock first, so that the check and the counts of concurrent
  // calls, from any process on the file, never interleave.
  const record = db.transaction(
    (keys: readonly FailureLimit[], { now, windowMs }: ThrottleWindow): FailureRecord => {
      sweep.run(now)
      const refused = full(
        keys,
        read(
          keys.map(({ key }) => key),
          now,
        ),
      )
      if (refused !== undefined) return refused
      for (const { key } of keys) count.run(key, now + windowMs)
      return { recorded: true }
    },
  )
  return {
    sweep: (now) => sweep.run(now).changes,
    failures(keys, now) {
      return settle(() => {
        use()
        return read(keys, now)
      })
    },
    recordFailure(keys, window) {
      return settle(() => {
        use()
        return record.immediate(keys, window)
      })
    },
  }
}

/** One statement on the PostgreSQL store's pool or on one transaction's connection. */
type PgSql = <R extends QueryResultRow = QueryResultRow>(
  text: string,
  values?: readonly unknown[],
) => Promise<QueryResult<R>>

/** What the PostgreSQL adapter borrows of its store: its error handling and transactions. */
export interface PgRunner {
  run<T>(method: string, body: (sql: PgSql) => Promise<T>): Promise<T>
  transaction<T>(method: string, body: (sql: PgSql) => Promise<T>): Promise<T>
}

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
