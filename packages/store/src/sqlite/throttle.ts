import type Database from 'better-sqlite3'
import type {
  Reservation,
  ReservationTerms,
  Settlement,
  ThrottleLimit,
  ThrottleStore,
  ThrottleWindow,
} from '@tessera/grants'
import { parseWindow } from '../internal/tables/windows.js'
import { decideReservation } from '../internal/throttle.js'
import type { GroupCommit } from './group-commit.js'

/** The throttle's writes on one SQLite database, each a better-sqlite3 transaction. */
export interface SqliteThrottle {
  reserve: Database.Transaction<
    (asked: readonly ThrottleLimit[], terms: ReservationTerms) => Reservation
  >
  settle: Database.Transaction<(settlement: Settlement, window: ThrottleWindow) => void>
  /** Deletes ended windows and run-out holds; the number of rows deleted. */
  purge: (now: number) => number
}

/**
 * The throttle on SQLite. A reservation is one IMMEDIATE transaction: the write lock is taken up
 * front, so the sweep, the reads of failures and holds, and the new holds cannot interleave with
 * another process's, and of any number of concurrent reservations on one key, from any process
 * on the file, the holds granted never exceed its limit minus its failures.
 */
export function sqliteThrottle(db: Database.Database): SqliteThrottle {
  const sweepWindows = db.prepare<[number]>('DELETE FROM throttle WHERE reset_at <= ?')
  const sweepHolds = db.prepare<[number]>('DELETE FROM throttle_holds WHERE expires_at <= ?')
  const readWindow = db.prepare<[string]>('SELECT count, reset_at FROM throttle WHERE "key" = ?')
  const countHolds = db
    .prepare<[string]>('SELECT count(*) FROM throttle_holds WHERE "key" = ?')
    .pluck()
  const addHold = db.prepare<[string, string, number]>(
    'INSERT INTO throttle_holds (hold, "key", expires_at) VALUES (?, ?, ?)',
  )
  const endHold = db.prepare<[string]>('DELETE FROM throttle_holds WHERE hold = ?')
  // A window that has ended starts again at 1.
  const countFailure = db.prepare<[{ key: string; now: number; resetAt: number }]>(
    `INSERT INTO throttle ("key", count, reset_at) VALUES (@key, 1, @resetAt)
     ON CONFLICT ("key") DO UPDATE SET
       count = CASE WHEN reset_at <= @now THEN 1 ELSE count + 1 END,
       reset_at = CASE WHEN reset_at <= @now THEN @resetAt ELSE reset_at END`,
  )
  const clearWindow = db.prepare<[string]>('DELETE FROM throttle WHERE "key" = ?')

  const reserve = db.transaction(
    (asked: readonly ThrottleLimit[], { now, leaseMs }: ReservationTerms): Reservation => {
      // Ended windows and run-out holds are dropped as attempts come in, so that guessed
      // usernames do not pile up; every row left is live.
      sweepWindows.run(now)
      sweepHolds.run(now)
      const reservation = decideReservation(asked, {
        failures: (key) => {
          const row = readWindow.get(key)
          return row === undefined ? undefined : parseWindow(row)
        },
        inFlight: (key) => Number(countHolds.get(key)),
      })
      if (reservation.status === 'granted') {
        for (const { key } of asked) addHold.run(reservation.hold, key, now + leaseMs)
      }
      return reservation
    },
  )
  const settle = db.transaction(
    ({ hold, fail, clear }: Settlement, { now, windowMs }: ThrottleWindow): void => {
      endHold.run(hold)
      for (const key of fail) countFailure.run({ key, now, resetAt: now + windowMs })
      for (const key of clear) clearWindow.run(key)
    },
  )
  const purge = (now: number): number => sweepWindows.run(now).changes + sweepHolds.run(now).changes
  return { reserve, settle, purge }
}

/**
 * The throttle port: each reservation and settlement goes through the group commit, so that the
 * ones asked in one turn share a transaction.
 */
export function createSqliteThrottlePort(
  writes: SqliteThrottle,
  groupCommit: GroupCommit,
): ThrottleStore {
  return {
    reserveAttempts(asked, terms): Promise<Reservation> {
      return groupCommit.queue(writes.reserve, [asked, terms])
    },
    settleAttempts(settlement, window) {
      return groupCommit.queue(writes.settle, [settlement, window])
    },
  }
}
