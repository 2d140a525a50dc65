import { settle } from '../internal/settle.js'
import type { ParsedConfigStore } from '../parsed-config.js'

/** Parse results in a Map; `open` throws once the store is closed. */
export function createMemoryParsedConfig(open: () => void): {
  store: ParsedConfigStore
  clear(): void
} {
  const rows = new Map<string, { value: string; storedAt: number }>()
  const store: ParsedConfigStore = {
    list() {
      return settle(() => {
        open()
        return [...rows].map(([key, { value }]) => ({ key, value }))
      })
    },
    add(entries, now) {
      return settle(() => {
        open()
        // checkedStore hands over the entries checked, each key once, in order.
        let inserted = 0
        for (const { key, value } of entries) {
          rows.set(key, { value, storedAt: now })
          inserted++
        }
        return inserted
      })
    },
    prune(keep, before) {
      return settle(() => {
        open()
        let deleted = 0
        for (const [key, { storedAt }] of rows) {
          if (storedAt < before && !keep.has(key)) {
            rows.delete(key)
            deleted++
          }
        }
        return deleted
      })
    },
  }
  return { store, clear: () => rows.clear() }
}
