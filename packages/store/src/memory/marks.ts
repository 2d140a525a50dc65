import type { MarkStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'
import { Table } from './table.js'

// JSON of the pair: no separator can be confused with a character of a kind or an id.
const markKey = (kind: string, id: string): string => JSON.stringify([kind, id])

/** Expiring marks in a table; `open` throws once the store is closed. */
export function createMemoryMarks(open: () => void): {
  store: MarkStore
  /** Deletes the marks expired at `now`; returns how many. */
  sweep: (now: number) => number
  clear(): void
} {
  /** Expiry (epoch ms) of each mark, by tenant and then by the (kind, id) pair as JSON. */
  const marks = new Table<number>()
  const store: MarkStore = {
    mark(tenant, kind, id, expiresAt, now) {
      return settle(() => {
        open()
        const key = markKey(kind, id)
        const current = marks.get(tenant, key)
        if (current !== undefined && current > now) return false
        marks.set(tenant, key, expiresAt)
        return true
      })
    },
    isMarked(tenant, kind, id, now) {
      return settle(() => {
        open()
        const expiresAt = marks.get(tenant, markKey(kind, id))
        return expiresAt !== undefined && expiresAt > now
      })
    },
  }
  return {
    store,
    sweep: (now) => marks.deleteWhere((expiresAt) => expiresAt <= now),
    clear: () => marks.clear(),
  }
}
