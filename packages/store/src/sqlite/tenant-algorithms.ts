import type { TenantAlgorithmStore } from '@tessera/keys'
import { settle } from '../internal/settle.js'
import {
  parseTenantAlgorithmRow,
  TENANT_ALGORITHM_COLUMN_NAMES,
  TENANT_ALGORITHM_COLUMNS,
  tenantAlgorithmValues,
} from '../internal/tables/tenant-algorithms.js'
import { placeholders, type SqliteContext } from './context.js'

/** The port over the SQLite `tenant_algorithms` table. */
export function createSqliteTenantAlgorithms({
  db,
  use,
  wrote,
}: SqliteContext): TenantAlgorithmStore {
  const list = db.prepare<[string]>(
    `SELECT ${TENANT_ALGORITHM_COLUMNS} FROM tenant_algorithms WHERE tenant IN (SELECT value FROM json_each(?))`,
  )
  const insert = db.prepare<[unknown[]]>(
    `INSERT INTO tenant_algorithms (${TENANT_ALGORITHM_COLUMNS}) VALUES (${placeholders(TENANT_ALGORITHM_COLUMN_NAMES)})
     ON CONFLICT (tenant) DO NOTHING`,
  )
  const replace = db.prepare<[string, number, number, string, string, number, number]>(
    `UPDATE tenant_algorithms SET algorithm = ?, since = ?, hs256_before = ?
     WHERE tenant = ? AND algorithm = ? AND since = ? AND hs256_before = ?`,
  )
  return {
    listTenantAlgorithms(tenants) {
      return settle(() => {
        use()
        return list.all(JSON.stringify(tenants)).map(parseTenantAlgorithmRow)
      })
    },
    insertTenantAlgorithmIfAbsent(record) {
      return settle(() => {
        use()
        const { changes } = insert.run(tenantAlgorithmValues(record))
        wrote()
        return changes === 1
      })
    },
    replaceTenantAlgorithm(expected, next) {
      return settle(() => {
        use()
        const { changes } = replace.run(
          next.algorithm,
          next.since,
          next.hs256Before ? 1 : 0,
          expected.tenant,
          expected.algorithm,
          expected.since,
          expected.hs256Before ? 1 : 0,
        )
        wrote()
        return changes === 1
      })
    },
  }
}
