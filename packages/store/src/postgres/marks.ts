import type { MarkStore } from '@tessera/grants'
import { utf8, type PgRunner } from './runner.js'

/** The mark store over the PostgreSQL `marks` table; a mark's id, a client's, is BYTEA. */
export function createPostgresMarks({ run }: PgRunner): MarkStore {
  return {
    mark(tenant, kind, id, expiresAt, now) {
      // One statement decides: a new mark is inserted, an expired one set again, a live one left
      // alone. Concurrent calls for one mark, on any replica, queue on its row (or on the
      // uncommitted insert of it); each one after the first re-checks the DO UPDATE's WHERE on
      // the committed row, finds it live, and changes nothing.
      return run('mark', async (sql) => {
        const { rowCount } = await sql(
          `INSERT INTO marks (tenant, kind, id, expires_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant, kind, id) DO UPDATE SET expires_at = EXCLUDED.expires_at
             WHERE marks.expires_at <= $5`,
          [tenant, kind, utf8(id), expiresAt, now],
        )
        return rowCount === 1
      })
    },
    isMarked(tenant, kind, id, now) {
      return run('isMarked', async (sql) => {
        const { rowCount } = await sql(
          `SELECT 1 FROM marks
           WHERE tenant = $1 AND kind = $2 AND id = $3 AND expires_at > $4`,
          [tenant, kind, utf8(id), now],
        )
        return rowCount === 1
      })
    },
  }
}
