import type { TenantAlgorithmRecord, TenantAlgorithmStore } from '@tessera/keys'
import { checkTenantNames } from './checks.js'
import { settle } from './settle.js'

/** A record as the port takes it; a misuse is a TypeError that names the method. */
export function checkRecord(method: string, record: TenantAlgorithmRecord): void {
  const ok =
    typeof record === 'object' &&
    record !== null &&
    typeof record.tenant === 'string' &&
    record.tenant !== '' &&
    (record.algorithm === 'HS256' || record.algorithm === 'RS256') &&
    Number.isSafeInteger(record.since) &&
    typeof record.hs256Before === 'boolean'
  if (!ok) throw new TypeError(`${method}: not a tenant algorithm record`)
}

/** Whether two records of one tenant say the same. */
export function same(a: TenantAlgorithmRecord, b: TenantAlgorithmRecord): boolean {
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
        checkTenantNames('listTenantAlgorithms', tenants)
        return tenants.flatMap((t) => {
          const record = records.get(t)
          return record === undefined ? [] : [{ ...record }]
        })
      })
    },
    insertTenantAlgorithmIfAbsent(record) {
      return settle(() => {
        open()
        checkRecord('insertTenantAlgorithmIfAbsent', record)
        if (records.has(record.tenant)) return false
        records.set(record.tenant, { ...record })
        return true
      })
    },
    replaceTenantAlgorithm(expected, next) {
      return settle(() => {
        open()
        checkRecord('replaceTenantAlgorithm', expected)
        checkRecord('replaceTenantAlgorithm', next)
        const stored = records.get(expected.tenant)
        if (stored === undefined || !same(stored, expected)) return false
        records.set(expected.tenant, { ...next, tenant: expected.tenant })
        return true
      })
    },
  }
  return { store, clear: () => records.clear() }
}
