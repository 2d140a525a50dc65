import type { FailureLimit, FailureRecord, FailureWindow, ThrottleWindow } from '@tessera/grants'
import { full, type SweptFailureCounter } from '../client-auth-failures.js'
import { settle } from '../internal/settle.js'
import { parseWindow } from '../internal/tables/windows.js'
import type { SqliteContext } from './context.js'

/** The adapter over `client_auth_failures` of an SQLite file. */
export function createSqliteFailureCounter({ db, use }: SqliteContext): SweptFailureCounter {
  const sweep = db.prepare<[number]>('DELETE FROM client_auth_failures WHERE reset_at <= ?')
  const select = db.prepare<[string, number]>(
    'SELECT count, reset_at FROM client_auth_failures WHERE "key" = ? AND reset_at > ?',
  )
  // The two keys of an attempt that names a client (its client and its address) in one
  // statement: the throttle reads them before every client authentication.
  const selectPair = db.prepare<[string, string, number], { key: string }>(
    `SELECT "key", count, reset_at FROM client_auth_failures
     WHERE "key" IN (?, ?) AND reset_at > ?`,
  )
  // Called after the sweep, under the write lock: a stored row is an open window.
  const count = db.prepare<[string, number]>(
    `INSERT INTO client_auth_failures ("key", count, reset_at) VALUES (?, 1, ?)
     ON CONFLICT ("key") DO UPDATE SET count = count + 1`,
  )
  const read = (keys: readonly string[], now: number): (FailureWindow | undefined)[] => {
    const [first, second] = keys
    if (keys.length === 2 && first !== undefined && second !== undefined) {
      const rows = selectPair.all(first, second, now)
      if (rows.length === 0) return [undefined, undefined]
      return keys.map((key) => {
        const row = rows.find((open) => open.key === key)
        return row === undefined ? undefined : parseWindow(row)
      })
    }
    return keys.map((key) => {
      const row = select.get(key, now)
      return row === undefined ? undefined : parseWindow(row)
    })
  }
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
