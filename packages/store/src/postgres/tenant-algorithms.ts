import type { TenantAlgorithmStore } from '@tessera/keys'
import {
  parseTenantAlgorithmRow,
  TENANT_ALGORITHM_COLUMN_NAMES,
  TENANT_ALGORITHM_COLUMNS,
  tenantAlgorithmValues,
} from '../internal/tables/tenant-algorithms.js'
import { placeholders, type PgRunner } from './runner.js'

/** The port over the PostgreSQL `tenant_algorithms` table. */
export function createPostgresTenantAlgorithms({ run }: PgRunner): TenantAlgorithmStore {
  return {
    listTenantAlgorithms(tenants) {
      return run('listTenantAlgorithms', async (sql) => {
        const { rows } = await sql(
          `SELECT ${TENANT_ALGORITHM_COLUMNS} FROM tenant_algorithms WHERE tenant = ANY($1::text[])`,
          [tenants],
        )
        return rows.map(parseTenantAlgorithmRow)
      })
    },
    insertTenantAlgorithmIfAbsent(record) {
      return run('insertTenantAlgorithmIfAbsent', async (sql) => {
        const { rowCount } = await sql(
          `INSERT INTO tenant_algorithms (${TENANT_ALGORITHM_COLUMNS}) VALUES (${placeholders(TENANT_ALGORITHM_COLUMN_NAMES)})
           ON CONFLICT (tenant) DO NOTHING`,
          tenantAlgorithmValues(record),
        )
        return rowCount === 1
      })
    },
    replaceTenantAlgorithm(expected, next) {
      return run('replaceTenantAlgorithm', async (sql) => {
        const { rowCount } = await sql(
          `UPDATE tenant_algorithms SET algorithm = $1, since = $2, hs256_before = $3
           WHERE tenant = $4 AND algorithm = $5 AND since = $6 AND hs256_before = $7`,
          [
            next.algorithm,
            next.since,
            next.hs256Before ? 1 : 0,
            expected.tenant,
            expected.algorithm,
            expected.since,
            expected.hs256Before ? 1 : 0,
          ],
        )
        return rowCount === 1
      })
    },
  }
}
