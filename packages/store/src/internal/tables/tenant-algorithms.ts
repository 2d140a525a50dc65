import type { TenantAlgorithmRecord } from '@tessera/keys'
import * as z from 'zod'
import { StoreError } from '../../errors.js'
import { columnList } from './shared.js'

/** The columns of `tenant_algorithms`, in the order of {@link tenantAlgorithmValues}. */
export const TENANT_ALGORITHM_COLUMN_NAMES = [
  'tenant',
  'algorithm',
  'since',
  'hs256_before',
] as const

export const TENANT_ALGORITHM_COLUMNS = columnList(TENANT_ALGORITHM_COLUMN_NAMES)

const RowSchema = z.object({
  tenant: z.string(),
  algorithm: z.enum(['HS256', 'RS256']),
  since: z.int(),
  hs256_before: z.union([z.literal(0), z.literal(1)]),
})

/** A record as the values of its row, in TENANT_ALGORITHM_COLUMNS order; a boolean as 0 or 1. */
export function tenantAlgorithmValues(record: TenantAlgorithmRecord): unknown[] {
  return [record.tenant, record.algorithm, record.since, record.hs256Before ? 1 : 0]
}

/** A row of `tenant_algorithms` as its record. */
export function parseTenantAlgorithmRow(row: unknown): TenantAlgorithmRecord {
  const result = RowSchema.safeParse(row)
  if (!result.success) {
    const tenant = (row as { tenant?: unknown } | null)?.tenant
    throw new StoreError(
      'ERR_STORE_ROW_INVALID',
      `the tenant_algorithms row (${String(tenant)}) is invalid: ` +
        result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    )
  }
  const { tenant, algorithm, since, hs256_before } = result.data
  return { tenant, algorithm, since, hs256Before: hs256_before === 1 }
}
