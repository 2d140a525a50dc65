import { createHash } from 'node:crypto'
import type { Reservation, ThrottleLimit, ThrottleStore } from '@tessera/grants'
import { parseWindow } from '../internal/tables/windows.js'
import { decideReservation } from '../internal/throttle.js'
import type { PgRunner } from './runner.js'

/** The first key of the two-key advisory locks that serialize reservations of one throttle key. */
const THROTTLE_LOCK_CLASS = 0x7468_7274

/**
 * Locks each throttle key of $2 (int4 hashes, sorted) for the transaction, in that order, so two
 * reservations never wait on each other. Two keys that share a hash only wait on each other more.
 */
const LOCK_KEYS = 'SELECT pg_advisory_xact_lock($1::int, l) FROM unnest($2::int[]) AS l'

/**
 * Each key of $1 with its open window at $2 = now (none: NULL count) and its live holds, in one
 * statement: one snapshot, so a settlement that commits meanwhile is seen whole or not at all
 * (a hold and the failure it became are never both missed).
 */
const READ_KEYS = `
  SELECT encode(a.k, 'hex') AS key_hex, t.count, t.reset_at,
    (SELECT count(*) FROM throttle_holds AS h
      WHERE h."key" = a.k AND h.expires_at > $2::bigint)::int AS held
  FROM unnest($1::bytea[]) AS a(k)
  LEFT JOIN throttle AS t ON t."key" = a.k AND t.reset_at > $2::bigint`

const ADD_HOLDS = `
  INSERT INTO throttle_holds (hold, "key", expires_at)
  SELECT $1::text, k, $3::bigint FROM unnest($2::bytea[]) AS k`

const END_HOLD = 'DELETE FROM throttle_holds WHERE hold = $1::text'

/**
 * One failure on each key of $1 (sorted, so concurrent settlements lock rows in one order) at
 * $2 = now, opening windows that end at $3; a window that has ended starts again at 1.
 */
const COUNT_FAILURES = `
  INSERT INTO throttle ("key", count, reset_at)
  SELECT k, 1, $3::bigint FROM unnest($1::bytea[]) WITH ORDINALITY AS f(k, n) ORDER BY n
  ON CONFLICT ("key") DO UPDATE SET
    count = CASE WHEN throttle.reset_at <= $2::bigint THEN 1 ELSE throttle.count + 1 END,
    reset_at = CASE WHEN throttle.reset_at <= $2::bigint THEN $3::bigint ELSE throttle.reset_at END`

const CLEAR_KEYS = 'DELETE FROM throttle WHERE "key" = ANY($1::bytea[])'

/**
 * Run-out holds, for purgeExpired. Rows a settlement is ending are skipped (and purged next
 * time): a settlement also writes throttle rows, which a purge's own order could cross.
 */
export const PURGE_HOLDS = `DELETE FROM throttle_holds WHERE (hold, "key") IN
  (SELECT hold, "key" FROM throttle_holds WHERE expires_at <= $1 FOR UPDATE SKIP LOCKED)`

function lockHash(key: Buffer): number {
  return createHash('sha256').update(key).digest().readInt32BE(0)
}

const byBytes = (a: Buffer, b: Buffer): number => Buffer.compare(a, b)

/**
 * The throttle on PostgreSQL, for any number of replicas. A reservation locks its keys (advisory
 * locks, in one order), reads failures and live holds in one statement, and adds its holds in
 * the same transaction, so concurrent reservations of one key, from any replica, never hold more
 * than its limit minus its failures. A settlement is one transaction that ends the hold, counts
 * the failures and clears the keys.
 */
export function createPostgresThrottle({ run, transaction }: PgRunner): ThrottleStore {
  return {
    reserveAttempts(asked: readonly ThrottleLimit[], terms): Promise<Reservation> {
      return run('reserveAttempts', async () => {
        const { now, leaseMs } = terms
        const keys = asked.map(({ key }) => Buffer.from(key, 'utf8'))
        const locks = [...new Set(keys.map(lockHash))].sort((a, b) => a - b)
        return transaction('reserveAttempts', async (tx) => {
          await tx(LOCK_KEYS, [THROTTLE_LOCK_CLASS, locks])
          const { rows } = await tx(READ_KEYS, [keys, now])
          const byHex = new Map(rows.map((row) => [String(row.key_hex), row]))
          const rowOf = (key: string): Record<string, unknown> | undefined =>
            byHex.get(Buffer.from(key, 'utf8').toString('hex'))
          const reservation = decideReservation(asked, {
            failures: (key) => {
              const row = rowOf(key)
              return row === undefined || row.count === null ? undefined : parseWindow(row)
            },
            inFlight: (key) => Number(rowOf(key)?.held ?? 0),
          })
          if (reservation.status === 'granted') {
            await tx(ADD_HOLDS, [reservation.hold, keys, now + leaseMs])
          }
          return reservation
        })
      })
    },
    settleAttempts(settlement, window) {
      return run('settleAttempts', async () => {
        const { now, windowMs } = window
        const fail = settlement.fail.map((key) => Buffer.from(key, 'utf8')).sort(byBytes)
        const clear = settlement.clear.map((key) => Buffer.from(key, 'utf8')).sort(byBytes)
        await transaction('settleAttempts', async (tx) => {
          await tx(END_HOLD, [settlement.hold])
          if (fail.length > 0) await tx(COUNT_FAILURES, [fail, now, now + windowMs])
          if (clear.length > 0) await tx(CLEAR_KEYS, [clear])
        })
      })
    },
  }
}
