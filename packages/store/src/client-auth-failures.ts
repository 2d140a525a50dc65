import type { FailureCounter, FailureLimit, FailureRecord, FailureWindow } from '@tessera/grants'
import { settle } from './internal/settle.js'

/**
 * The FailureCounter (failed client authentications): the refusal the three adapters share, and
 * the memory adapter. Their arguments are checked by `checkedStore`, around every adapter.
 */

/** The first key whose open window already holds its limit, as a refusal. */
export function full(
  keys: readonly FailureLimit[],
  open: readonly (FailureWindow | undefined)[],
): FailureRecord | undefined {
  for (const [i, { key, limit }] of keys.entries()) {
    const window = open[i]
    if (window !== undefined && window.count >= limit) {
      return { recorded: false, blocked: key, resetAt: window.resetAt }
    }
  }
  return undefined
}

/** An adapter with the sweep of ended windows that its store's purge runs. */
export interface SweptFailureCounter extends FailureCounter {
  /** Deletes the windows ended at `now`; returns how many (SQLite: inside a transaction). */
  sweep(now: number): number
}

/** In-process windows; `use` throws once the store is closed. */
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
