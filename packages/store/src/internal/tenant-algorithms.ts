import type Database from 'better-sqlite3'
import type { TenantAlgorithmRecord, TenantAlgorithmStore } from '@tessera/keys'
import type { QueryResult, QueryResultRow } from 'pg'
import * as z from 'zod'
import { StoreError } from '../errors.js'
import { checkTenantAlgorithm, checkTenantNames } from './checks.js'
import { settle } from './settle.js'

const RowSchema = z.object({
  tenant: z.string(),
  algorithm: z.enum(['HS256', 'RS256']),
  since: z.int(),
  hs256_before: z.union([z.literal(0), z.literal(1)]),
})

const COLUMNS = 'tenant, algorithm, since, hs256_before'

function parseRow(row: unknown): TenantAlgorithmRecord {
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

/** Whether two records of one tenant say the same. */
export function same(a: TenantAlgorithmRecord, b: TenantAlgorithmRecord): boolean {
  return a.algorithm === b.algorithm && a.since === b.since && a.hs256Before === b.hs256Before
}

/** The port over the SQLite `tenant_algorithms` table. */
export function createSqliteTenantAlgorithms(
  db: Database.Database,
  use: () => void,
  wrote: () => void,
): TenantAlgorithmStore {
  const list = db.prepare<[string]>(
    `SELECT ${COLUMNS} FROM tenant_algorithms WHERE tenant IN (SELECT value FROM json_each(?))`,
  )
  const insert = db.prepare<[string, string, number, number]>(
    `INSERT INTO tenant_algorithms (${COLUMNS}) VALUES (?, ?, ?, ?) ON CONFLICT (tenant) DO NOTHING`,
  )
  const replace = db.prepare<[string, number, number, string, string, number, number]>(
    `UPDATE tenant_algorithms SET algorithm = ?, since = ?, hs256_before = ?
     WHERE tenant = ? AND algorithm = ? AND since = ? AND hs256_before = ?`,
  )
  return {
    listTenantAlgorithms(tenants) {
      return settle(() => {
        use()
        checkTenantNames('listTenantAlgorithms', tenants)
        return list.all(JSON.stringify(tenants)).map(parseRow)
      })
    },
    insertTenantAlgorithmIfAbsent(record) {
      return settle(() => {
        use()
        checkTenantAlgorithm('insertTenantAlgorithmIfAbsent', record)
        const { tenant, algorithm, since, hs256Before } = record
        const { changes } = insert.run(tenant, algorithm, since, hs256Before ? 1 : 0)
        wrote()
        return changes === 1
      })
    },
    replaceTenantAlgorithm(expected, next) {
      return settle(() => {
        use()
        checkTenantAlgorithm('replaceTenantAlgorithm', expected)
        checkTenantAlgorithm('replaceTenantAlgorithm', next)
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

type Sql = <R extends QueryResultRow = QueryResultRow>(
  text: string,
  values?: readonly unknown[],
) => Promise<QueryResult<R>>

/** The port over the PostgreSQL `tenant_algorithms` table; `run` is the adapter's. */
export function createPostgresTenantAlgorithms(
  run: <T>(method: string, body: (sql: Sql) => Promise<T>) => Promise<T>,
): TenantAlgorithmStore {
  return {
    listTenantAlgorithms(tenants) {
      return run('listTenantAlgorithms', async (sql) => {
        checkTenantNames('listTenantAlgorithms', tenants)
        const { rows } = await sql(
          `SELECT ${COLUMNS} FROM tenant_algorithms WHERE tenant = ANY($1::text[])`,
          [tenants],
        )
        return rows.map(parseRow)
      })
    },
    insertTenantAlgorithmIfAbsent(record) {
      return run('insertTenantAlgorithmIfAbsent', async (sql) => {
        checkTenantAlgorithm('insertTenantAlgorithmIfAbsent', record)
        const { rowCount } = await sql(
          `INSERT INTO tenant_algorithms (${COLUMNS}) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant) DO NOTHING`,
          [record.tenant, record.algorithm, record.since, record.hs256Before ? 1 : 0],
        )
        return rowCount === 1
      })
    },
    replaceTenantAlgorithm(expected, next) {
      return run('replaceTenantAlgorithm', async (sql) => {
        checkTenantAlgorithm('replaceTenantAlgorithm', expected)
        checkTenantAlgorithm('replaceTenantAlgorithm', next)
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
