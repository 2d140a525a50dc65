import { randomUUID } from 'node:crypto'
import type { Reservation, ThrottleLimit } from '@tessera/grants'

/** What an adapter knows of one key at the moment of a reservation. */
export interface KeyCounts {
  /** The key's open window of failures, if it has one. */
  failures: (key: string) => { count: number; resetAt: number } | undefined
  /** How many live holds the key has. */
  inFlight: (key: string) => number
}

/**
 * The one rule every adapter applies, under its own lock: blocked by the first key asked whose
 * open window holds its limit of failures; else busy on the first key whose failures and holds
 * reach its limit; else granted, under a new hold id that the adapter then stores on every key.
 */
export function decideReservation(asked: readonly ThrottleLimit[], counts: KeyCounts): Reservation {
  for (const { key, limit } of asked) {
    const open = counts.failures(key)
    if (open !== undefined && open.count >= limit) {
      return { status: 'blocked', key, resetAt: open.resetAt }
    }
  }
  for (const { key, limit } of asked) {
    if ((counts.failures(key)?.count ?? 0) + counts.inFlight(key) >= limit) {
      return { status: 'busy', key }
    }
  }
  return { status: 'granted', hold: randomUUID() }
}
