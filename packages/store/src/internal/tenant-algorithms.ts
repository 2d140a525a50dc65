import type { TenantAlgorithmRecord } from '@tessera/keys'

/** Whether two records of one tenant say the same. */
export function same(a: TenantAlgorithmRecord, b: TenantAlgorithmRecord): boolean {
  return a.algorithm === b.algorithm && a.since === b.since && a.hs256Before === b.hs256Before
}
