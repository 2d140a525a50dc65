import type { ThrottleStore } from '../ports.js'

/**
 * A ThrottleStore in a Map, for the grants' unit tests (the real adapters and their contract
 * suite are in @tessera/store). Each call runs to completion synchronously, so it is atomic.
 */
export function memoryThrottle(): ThrottleStore {
  const windows = new Map<string, { count: number; resetAt: number }>()
  return {
    reserveAttempt(key, { limit, now, windowMs }) {
      const open = windows.get(key)
      if (open && open.resetAt > now) {
        if (open.count >= limit) return Promise.resolve({ granted: false, resetAt: open.resetAt })
        open.count++
        return Promise.resolve({ granted: true, resetAt: open.resetAt })
      }
      windows.set(key, { count: 1, resetAt: now + windowMs })
      return Promise.resolve({ granted: true, resetAt: now + windowMs })
    },
    releaseAttempt(key, resetAt) {
      const open = windows.get(key)
      if (open && open.resetAt === resetAt && open.count > 0) open.count--
      return Promise.resolve()
    },
    clearAttempts(key) {
      windows.delete(key)
      return Promise.resolve()
    },
  }
}
