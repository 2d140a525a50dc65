import type { ExpiryStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'

/**
 * The purge of the memory store: each sweep deletes what has expired of one port's rows at `now`
 * and counts it. `open` throws once the store is closed.
 */
export function createMemoryExpiry(
  open: () => void,
  sweeps: readonly ((now: number) => number)[],
): ExpiryStore {
  return {
    purgeExpired(now) {
      return settle(() => {
        open()
        return sweeps.reduce((deleted, sweep) => deleted + sweep(now), 0)
      })
    },
  }
}
