import type { MarkStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'
import type { SqliteContext } from './context.js'

/** The mark store over the SQLite `marks` table. */
export function createSqliteMarks({ db, use, wrote }: SqliteContext): MarkStore {
  // One statement decides: a new mark is inserted, an expired one is set again, a live one is
  // left alone (the DO UPDATE's WHERE fails and nothing changes). SQLite runs it under the write
  // lock, so of concurrent calls, in any process, one changes a row.
  const setMark = db.prepare<{
    tenant: string
    kind: string
    id: string
    expiresAt: number
    now: number
  }>(
    `INSERT INTO marks (tenant, kind, id, expires_at) VALUES (@tenant, @kind, @id, @expiresAt)
     ON CONFLICT (tenant, kind, id) DO UPDATE SET expires_at = excluded.expires_at
       WHERE expires_at <= @now`,
  )
  const readMark = db.prepare<[string, string, string, number]>(
    'SELECT 1 FROM marks WHERE tenant = ? AND kind = ? AND id = ? AND expires_at > ?',
  )
  return {
    mark(tenant, kind, id, expiresAt, now) {
      return settle(() => {
        use()
        const { changes } = setMark.run({ tenant, kind, id, expiresAt, now })
        wrote()
        return changes === 1
      })
    },
    isMarked(tenant, kind, id, now) {
      return settle(() => {
        use()
        return readMark.get(tenant, kind, id, now) !== undefined
      })
    },
  }
}
