import type { FailureCounter, FailureLimit, FailureRecord, FailureWindow } from '@tessera/grants'

/**
 * What the FailureCounter adapters (failed client authentications) of the three stores share:
 * the refusal, and the sweep their purges run. Their arguments are checked by `checkedStore`,
 * around every adapter.
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
