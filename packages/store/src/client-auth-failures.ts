import type {
  FailureCounter,
  FailureLimit,
  FailureRecord,
  FailureWindow,
  ThrottleWindow,
} from '@tessera/grants'
import { checkText, checkTime } from './internal/checks.js'
import { settle } from './internal/settle.js'

/**
 * The FailureCounter (failed client authentications): the checks and the refusal the three
 * adapters share, and the memory adapter. Keys are the
 * grants' hashes, so each is a short ASCII string; every adapter refuses the same misuse.
 */

export function checkKeys(method: string, given: readonly string[]): void {
  if (!Array.isArray(given) || given.length === 0) {
    throw new TypeError(`${method}: keys must be a non-empty array`)
  }
  // Array.isArray narrows to any[]; the elements are checked one by one below.
  const keys: readonly string[] = given
  for (const key of keys) checkText(method, 'key', key)
  if (new Set(keys).size !== keys.length) throw new TypeError(`${method}: keys must be distinct`)
}

export function checkRecordArgs(given: readonly FailureLimit[], window: ThrottleWindow): void {
  checkTime('recordFailure', 'now', window.now)
  if (!(Number.isSafeInteger(window.windowMs) && window.windowMs > 0)) {
    throw new TypeError('recordFailure: windowMs must be a positive integer number of milliseconds')
  }
  if (!Array.isArray(given)) throw new TypeError('recordFailure: keys must be a non-empty array')
  const keys: readonly FailureLimit[] = given
  checkKeys(
    'recordFailure',
    keys.map(({ key }) => key),
  )
  for (const { limit } of keys) {
    if (!(Number.isSafeInteger(limit) && limit > 0)) {
      throw new TypeError('recordFailure: limit must be a positive integer')
    }
  }
}

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
        checkKeys('failures', keys)
        checkTime('failures', 'now', now)
        return read(keys, now)
      })
    },
    recordFailure(keys, window) {
      return settle(() => {
        use()
        checkRecordArgs(keys, window)
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
