import type { ClientAuthPolicy } from '../context.js'
import type { FailureCounter, FailureWindow } from '../ports.js'

/** The client-auth limits of the grants' unit tests: the defaults, in a one-minute window. */
export const testClientAuthPolicy: ClientAuthPolicy = {
  maxFailures: 20,
  maxFailuresPerAddress: 100,
  windowMs: 60_000,
}

/**
 * A FailureCounter in a Map, for the grants' unit tests (the real adapters and their contract
 * suite are in @tessera/store). Each call runs to completion synchronously, so it is atomic.
 */
export function memoryFailureCounter(): FailureCounter {
  const windows = new Map<string, FailureWindow>()
  const open = (key: string, now: number): FailureWindow | undefined => {
    const window = windows.get(key)
    return window !== undefined && window.resetAt > now ? window : undefined
  }
  return {
    failures(keys, now) {
      return Promise.resolve(keys.map((key) => open(key, now)))
    },
    recordFailure(keys, { now, windowMs }) {
      for (const { key, limit } of keys) {
        const window = open(key, now)
        if (window !== undefined && window.count >= limit) {
          return Promise.resolve({ recorded: false, blocked: key, resetAt: window.resetAt })
        }
      }
      for (const { key } of keys) {
        const window = open(key, now)
        if (window === undefined) windows.set(key, { count: 1, resetAt: now + windowMs })
        else window.count++
      }
      return Promise.resolve({ recorded: true })
    },
  }
}
