import type { TenantAlgorithmRecord, TenantAlgorithmStore } from './ports.js'
import type { SigningAlgorithm } from './signer.js'

/** Options of {@link recordTenantAlgorithms}. */
export interface RecordTenantAlgorithmsOptions {
  /** Where the records live, shared by every replica. */
  store: TenantAlgorithmStore
  /** Each tenant's configured `jwt_algorithm`, as the start or reload applies it. */
  tenants: readonly { name: string; algorithm: SigningAlgorithm }[]
  /** Clock reading of the start or reload, epoch milliseconds. */
  now: number
  /**
   * KEY_PUBLISH_AHEAD_SECONDS in milliseconds: a tenant switched from HS256 starts signing
   * RS256 access tokens this long after the switch is applied, and HS256 until then.
   */
  publishAheadMs: number
}

/** The record that follows `record` when the tenant's algorithm is now `algorithm`. */
function following(
  record: TenantAlgorithmRecord,
  algorithm: SigningAlgorithm,
  now: number,
  publishAheadMs: number,
): TenantAlgorithmRecord {
  if (algorithm === 'RS256') {
    return { tenant: record.tenant, algorithm, since: now + publishAheadMs, hs256Before: true }
  }
  return { tenant: record.tenant, algorithm, since: now, hs256Before: record.hs256Before }
}

/**
 * Brings each tenant's algorithm record up to its configured algorithm and answers the records,
 * by tenant name. A tenant without a record gets its algorithm as the first one, with no HS256
 * past: a new tenant, and a tenant of a database made before these records existed (which
 * therefore accepts no HS256 token if it is RS256). A switch from HS256 to RS256 records when
 * RS256 starts signing (`now` + `publishAheadMs`); a switch back records HS256 from `now`.
 *
 * Writes are insert-if-absent and compare-and-set: replicas applying the same change converge
 * on the record of whichever wrote first, and a reload that lost reads the winner's.
 *
 * @example
 * ```ts
 * const records = await recordTenantAlgorithms({ store: store.algorithms, now: Date.now(),
 *   publishAheadMs: 60_000, tenants: [{ name: 'acme', algorithm: 'RS256' }] })
 * records.get('acme')?.since // when acme's RS256 access tokens began
 * ```
 */
export async function recordTenantAlgorithms(
  options: RecordTenantAlgorithmsOptions,
): Promise<Map<string, TenantAlgorithmRecord>> {
  const { store, tenants, now, publishAheadMs } = options
  const names = tenants.map((tenant) => tenant.name)
  const records = new Map<string, TenantAlgorithmRecord>()
  for (const record of await store.listTenantAlgorithms(names)) records.set(record.tenant, record)
  const lost: string[] = []
  for (const { name, algorithm } of tenants) {
    const record = records.get(name)
    if (record === undefined) {
      const first = { tenant: name, algorithm, since: now, hs256Before: false }
      if (await store.insertTenantAlgorithmIfAbsent(first)) records.set(name, first)
      else lost.push(name)
    } else if (record.algorithm !== algorithm) {
      const next = following(record, algorithm, now, publishAheadMs)
      if (await store.replaceTenantAlgorithm(record, next)) records.set(name, next)
      else lost.push(name)
    }
  }
  if (lost.length > 0) {
    for (const record of await store.listTenantAlgorithms(lost)) records.set(record.tenant, record)
  }
  return records
}

/**
 * When an RS256 tenant switched from HS256 (epoch milliseconds), from its record: the HS256
 * tokens it may still accept are those issued before it. Undefined when the record shows no
 * HS256 past, or the tenant is HS256, or has no record.
 */
export function hs256SwitchTime(record: TenantAlgorithmRecord | undefined): number | undefined {
  if (record === undefined || record.algorithm !== 'RS256' || !record.hs256Before) return undefined
  return record.since
}
