import type { FailureWindow } from '@tessera/grants'
import { full, type SweptFailureCounter } from '../client-auth-failures.js'
import { settle } from '../internal/settle.js'

/** Failed client authentications in a Map; `use` throws once the store is closed. */
export function createMemoryFailureCounter(use: () => void): SweptFailureCounter {
  const windows = new Map<string, FailureWindow>()
  const read = (keys: readonly string[], now: number): (FailureWindow | undefined)[] =>
    keys.map((key) => {
      const window = windows.get(key)
      return window !== undefined && window.resetAt > now ? { ...window } : undefined
    })
  const sweep = (now: number): number => {
    let swept = 0
    for (const [key, { resetAt }] of windows) {
      if (resetAt <= now) swept += Number(windows.delete(key))
    }
    return swept
  }
  return {
    sweep,
    failures(keys, now) {
      return settle(() => {
        use()
        return read(keys, now)
      })
    },
    recordFailure(keys, window) {
      return settle(() => {
        use()
        const { now, windowMs } = window
        // Ended windows go as failures come in, so that guessed client ids do not pile up.
        sweep(now)
        const refused = full(
          keys,
          read(
            keys.map(({ key }) => key),
            now,
          ),
        )
        if (refused !== undefined) return refused
        for (const { key } of keys) {
          const open = windows.get(key)
          if (open === undefined) windows.set(key, { count: 1, resetAt: now + windowMs })
          else open.count++
        }
        return { recorded: true }
      })
    },
  }
}
