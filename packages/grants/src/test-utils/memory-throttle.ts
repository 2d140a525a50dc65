import type { ThrottleStore } from '../ports.js'

/**
 * A ThrottleStore in Maps, for the grants' unit tests (the real adapters and their contract
 * suite are in @tessera/store). Each call runs to completion synchronously, so it is atomic.
 */
export function memoryThrottle(): ThrottleStore {
  const windows = new Map<string, { count: number; resetAt: number }>()
  const holds = new Map<string, { keys: readonly string[]; expiresAt: number }>()
  let next = 0
  const failures = (key: string, now: number): number => {
    const open = windows.get(key)
    return open !== undefined && open.resetAt > now ? open.count : 0
  }
  const inFlight = (key: string, now: number): number =>
    [...holds.values()].filter((h) => h.expiresAt > now && h.keys.includes(key)).length
  return {
    reserveAttempts(keys, { now, leaseMs }) {
      for (const { key, limit } of keys) {
        const open = windows.get(key)
        if (open && open.resetAt > now && open.count >= limit) {
          return Promise.resolve({ status: 'blocked', key, resetAt: open.resetAt })
        }
      }
      for (const { key, limit } of keys) {
        if (failures(key, now) + inFlight(key, now) >= limit) {
          return Promise.resolve({ status: 'busy', key })
        }
      }
      const hold = `hold-${++next}`
      holds.set(hold, { keys: keys.map(({ key }) => key), expiresAt: now + leaseMs })
      return Promise.resolve({ status: 'granted', hold })
    },
    settleAttempts({ hold, fail, clear }, { now, windowMs }) {
      holds.delete(hold)
      for (const key of fail) {
        const open = windows.get(key)
        if (open && open.resetAt > now) open.count++
        else windows.set(key, { count: 1, resetAt: now + windowMs })
      }
      for (const key of clear) windows.delete(key)
      return Promise.resolve()
    },
  }
}
