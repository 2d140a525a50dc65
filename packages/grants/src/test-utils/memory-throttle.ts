import type { HeldAttempt, ThrottleStore } from '../ports.js'

/**
 * A ThrottleStore in a Map, for the grants' unit tests (the real adapters and their contract
 * suite are in @tessera/store). Each call runs to completion synchronously, so it is atomic.
 */
export function memoryThrottle(): ThrottleStore {
  const windows = new Map<string, { count: number; resetAt: number }>()
  return {
    reserveAttempts(keys, { now, windowMs }) {
      for (const { key, limit } of keys) {
        const open = windows.get(key)
        if (open && open.resetAt > now && open.count >= limit) {
          return Promise.resolve({ granted: false, blocked: key, resetAt: open.resetAt })
        }
      }
      const held = keys.map(({ key }): HeldAttempt => {
        const open = windows.get(key)
        if (open && open.resetAt > now) {
          open.count++
          return { key, resetAt: open.resetAt }
        }
        windows.set(key, { count: 1, resetAt: now + windowMs })
        return { key, resetAt: now + windowMs }
      })
      return Promise.resolve({ granted: true, held })
    },
    settleAttempts({ clear, release }) {
      for (const { key, resetAt } of release) {
        const open = windows.get(key)
        if (open && open.resetAt === resetAt && open.count > 0) open.count--
      }
      for (const key of clear) windows.delete(key)
      return Promise.resolve()
    },
  }
}
