import type { TenantAlgorithmRecord, TenantAlgorithmStore } from '@tessera/keys'
import { settle } from '../internal/settle.js'

/** Whether two records of one tenant say the same. */
function same(a: TenantAlgorithmRecord, b: TenantAlgorithmRecord): boolean {
  return a.algorithm === b.algorithm && a.since === b.since && a.hs256Before === b.hs256Before
}

/** The port in a Map, for the memory store. */
export function createMemoryTenantAlgorithms(open: () => void): {
  store: TenantAlgorithmStore
  clear: () => void
} {
  const records = new Map<string, TenantAlgorithmRecord>()
  const store: TenantAlgorithmStore = {
    listTenantAlgorithms(tenants) {
      return settle(() => {
        open()
        return tenants.flatMap((t) => {
          const record = records.get(t)
          return record === undefined ? [] : [{ ...record }]
        })
      })
    },
    insertTenantAlgorithmIfAbsent(record) {
      return settle(() => {
        open()
        if (records.has(record.tenant)) return false
        records.set(record.tenant, { ...record })
        return true
      })
    },
    replaceTenantAlgorithm(expected, next) {
      return settle(() => {
        open()
        const stored = records.get(expected.tenant)
        if (stored === undefined || !same(stored, expected)) return false
        records.set(expected.tenant, { ...next, tenant: expected.tenant })
        return true
      })
    },
  }
  return { store, clear: () => records.clear() }
}
