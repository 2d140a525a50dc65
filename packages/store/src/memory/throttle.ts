import type { ThrottleStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'
import { decideReservation } from '../internal/throttle.js'

/** The throttle in Maps; `open` throws once the store is closed. */
export function createMemoryThrottle(open: () => void): {
  store: ThrottleStore
  /** Deletes the windows ended and the holds run out at `now`; returns how many. */
  sweep: (now: number) => number
  clear(): void
} {
  const windows = new Map<string, { count: number; resetAt: number }>()
  /** Attempts in flight, by hold: the keys held and when the hold's lease runs out. */
  const holds = new Map<string, { keys: Set<string>; expiresAt: number }>()
  const store: ThrottleStore = {
    reserveAttempts(asked, terms) {
      return settle(() => {
        open()
        const { now, leaseMs } = terms
        // Ended windows and run-out holds are dropped as attempts come in, so that guessed
        // usernames do not pile up.
        for (const [other, { resetAt }] of windows) if (resetAt <= now) windows.delete(other)
        for (const [id, hold] of holds) if (hold.expiresAt <= now) holds.delete(id)
        const reservation = decideReservation(asked, {
          failures: (key) => windows.get(key),
          inFlight: (key) => [...holds.values()].filter((hold) => hold.keys.has(key)).length,
        })
        if (reservation.status !== 'granted') return reservation
        holds.set(reservation.hold, {
          keys: new Set(asked.map(({ key }) => key)),
          expiresAt: now + leaseMs,
        })
        return reservation
      })
    },
    settleAttempts(settlement, window) {
      return settle(() => {
        open()
        const { now, windowMs } = window
        holds.delete(settlement.hold)
        for (const key of settlement.fail) {
          const current = windows.get(key)
          if (current !== undefined && current.resetAt > now) current.count++
          else windows.set(key, { count: 1, resetAt: now + windowMs })
        }
        for (const key of settlement.clear) windows.delete(key)
      })
    },
  }
  return {
    store,
    sweep(now) {
      let deleted = 0
      for (const [key, window] of windows) {
        if (window.resetAt <= now) {
          windows.delete(key)
          deleted++
        }
      }
      for (const [id, hold] of holds) {
        if (hold.expiresAt <= now) {
          holds.delete(id)
          deleted++
        }
      }
      return deleted
    },
    clear() {
      windows.clear()
      holds.clear()
    },
  }
}
