import type { SessionStore } from '@tessera/grants'
import {
  parseSessionEnd,
  parseSessionRow,
  SESSION_COLUMNS,
  sessionValues,
} from '../internal/tables/sessions.js'
import type { PgRunner } from './runner.js'

/**
 * A new session ($1 … $9, in SESSION_COLUMNS order), and the end of the one it replaces ($10,
 * none when NULL) at its createdAt, in one statement: a taken idHash fails both. The UPDATE
 * keeps the time a session first ended.
 */
const CREATE_SESSION = `
  WITH replaced AS (
    UPDATE sessions SET ended_at = $7::bigint
    WHERE tenant = $1::text AND id_hash = $10::text AND ended_at IS NULL
  )
  INSERT INTO sessions (${SESSION_COLUMNS})
  VALUES ($1::text, $2::text, $3::text, $4::text, $5::json, $6::bigint, $7::bigint, $8::bigint,
    $9::bigint)`

/**
 * The three steps of a logout ($1 tenant, $2 sid, $3 now), run in this order in one transaction,
 * each its own statement. Under READ COMMITTED every statement takes a new snapshot; that is
 * what makes a concurrent redemption of a code of the sid (REDEEM_CODE in codes.ts, one statement
 * that locks the code's row, then inserts the family) end one of two ways:
 *
 * - the logout's UPDATE of the code comes first: the redemption waits on the row lock, then
 *   re-checks its WHERE on the committed row, finds it consumed, and creates nothing;
 * - the redemption locks the code first: the logout's UPDATE waits for it to commit, then finds
 *   the code consumed and skips it. The family was committed with it, before the next statement
 *   began, so REVOKE_SID_FAMILIES, a later statement with a later snapshot, sees it and revokes it.
 *
 * Revoking families in the same statement as consuming codes (one snapshot) would miss that
 * family; so would revoking them first.
 */
const END_SID_SESSIONS = `UPDATE sessions SET ended_at = $3
  WHERE tenant = $1 AND sid = $2 AND ended_at IS NULL
  RETURNING expires_at`
const CONSUME_SID_CODES = `UPDATE authorization_codes SET consumed_at = $3
  WHERE tenant = $1 AND sid = $2 AND consumed_at IS NULL`
const REVOKE_SID_FAMILIES = `UPDATE refresh_families SET revoked_at = $3
  WHERE tenant = $1 AND sid = $2 AND revoked_at IS NULL`

/** The session store over the PostgreSQL `sessions` table, and the logout across codes and families. */
export function createPostgresSessions({ run, transaction }: PgRunner): SessionStore {
  return {
    createSession(session, replaces) {
      return run('createSession', async (sql) => {
        await sql(CREATE_SESSION, [...sessionValues(session), replaces ?? null])
      })
    },
    findSession(tenant, idHash) {
      return run('findSession', async (sql) => {
        const { rows } = await sql(
          `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant = $1 AND id_hash = $2`,
          [tenant, idHash],
        )
        return rows.length === 0 ? undefined : parseSessionRow(rows[0])
      })
    },
    endSession(tenant, sid, now) {
      return run('endSession', async () => {
        return transaction('endSession', async (tx) => {
          const args = [tenant, sid, now]
          const { rows } = await tx(END_SID_SESSIONS, args)
          await tx(CONSUME_SID_CODES, args)
          await tx(REVOKE_SID_FAMILIES, args)
          return rows.map(parseSessionEnd).some((expiresAt) => expiresAt > now)
        })
      })
    },
  }
}
