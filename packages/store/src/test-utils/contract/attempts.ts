import type { Reservation } from '@tessera/grants'
import type { Store } from '../../store.js'
import { hour } from './fixtures.js'

// Steps of the throttle port that the suites and the adapters' own tests take one at a time.

/** One attempt held on one key (with a lease of an hour), as the store answers it. */
export function reserveOne(
  store: Store,
  key: string,
  { limit, now }: { limit: number; now: number },
): Promise<Reservation> {
  return store.throttle.reserveAttempts([{ key, limit }], { now, leaseMs: hour })
}

/** Ends `hold` with nothing counted. */
export function releaseOne(store: Store, hold: string, now: number): Promise<void> {
  return store.throttle.settleAttempts({ hold, fail: [], clear: [] }, { now, windowMs: hour })
}

/**
 * One failed attempt on `key`: held, then settled as a failure in a window of `windowMs`.
 * Answers the reservation (a failure is counted only when it was granted).
 */
export async function failOne(
  store: Store,
  key: string,
  { limit, now, windowMs }: { limit: number; now: number; windowMs: number },
): Promise<Reservation> {
  const reservation = await reserveOne(store, key, { limit, now })
  if (reservation.status === 'granted') {
    await store.throttle.settleAttempts(
      { hold: reservation.hold, fail: [key], clear: [] },
      { now, windowMs },
    )
  }
  return reservation
}

/** Forgets the failures of `key`. */
export function clearOne(store: Store, key: string, now: number): Promise<void> {
  return store.throttle.settleAttempts(
    { hold: 'no-such-hold', fail: [], clear: [key] },
    { now, windowMs: hour },
  )
}

/**
 * The failures plus live holds of `key` at `now`, read through the port itself: a reservation
 * at limit k is granted only when they are below k, and is released at once.
 */
export async function attemptsHeld(store: Store, key: string, now: number): Promise<number> {
  for (let limit = 1; ; limit++) {
    const reservation = await reserveOne(store, key, { limit, now })
    if (reservation.status === 'granted') {
      await releaseOne(store, reservation.hold, now)
      return limit - 1
    }
  }
}

/** The settled failures of `key` at `now`: a reservation at limit k is blocked only from k. */
export async function failuresOf(store: Store, key: string, now: number): Promise<number> {
  for (let limit = 1; ; limit++) {
    const reservation = await reserveOne(store, key, { limit, now })
    if (reservation.status === 'granted') await releaseOne(store, reservation.hold, now)
    if (reservation.status !== 'blocked') return limit - 1
  }
}
