import type { SessionRecord, SessionStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'
import {
  parseSessionEnd,
  parseSessionRow,
  SESSION_COLUMN_NAMES,
  SESSION_COLUMNS,
  sessionValues,
} from '../internal/tables/sessions.js'
import { insertOnce, placeholders, type SqliteContext } from './context.js'

/** The session store over the SQLite `sessions` table, and the logout across codes and families. */
export function createSqliteSessions({ db, use, wrote }: SqliteContext): SessionStore {
  const insertSession = db.prepare<[unknown[]]>(
    `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (${placeholders(SESSION_COLUMN_NAMES)})`,
  )
  const selectSession = db.prepare<[string, string]>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND id_hash = ?`,
  )
  // A session keeps the time it first ended.
  const endReplacedSession = db.prepare<[number, string, string]>(
    `UPDATE sessions SET ended_at = ?
     WHERE tenant = ? AND id_hash = ? AND ended_at IS NULL`,
  )
  const endSessionsOfSid = db.prepare<[number, string, string]>(
    `UPDATE sessions SET ended_at = ?
     WHERE tenant = ? AND sid = ? AND ended_at IS NULL
     RETURNING expires_at`,
  )
  const consumeCodesOfSid = db.prepare<[number, string, string]>(
    `UPDATE authorization_codes SET consumed_at = ?
     WHERE tenant = ? AND sid = ? AND consumed_at IS NULL`,
  )
  const revokeFamiliesOfSid = db.prepare<[number, string, string]>(
    `UPDATE refresh_families SET revoked_at = ?
     WHERE tenant = ? AND sid = ? AND revoked_at IS NULL`,
  )

  // IMMEDIATE (see the callers): the write lock is held from the start, so no redemption of a
  // code of the sid, from any connection, falls between the steps.
  const createSession = db.transaction((session: SessionRecord, replaces: string | undefined) => {
    if (replaces !== undefined) {
      endReplacedSession.run(session.createdAt, session.tenant, replaces)
    }
    // A taken idHash throws and rolls the ending back too.
    insertOnce('the session', () => insertSession.run(sessionValues(session)))
  })
  const endSession = db.transaction((tenant: string, sid: string, now: number): boolean => {
    const ended = endSessionsOfSid.all(now, tenant, sid).map(parseSessionEnd)
    consumeCodesOfSid.run(now, tenant, sid)
    revokeFamiliesOfSid.run(now, tenant, sid)
    return ended.some((expiresAt) => expiresAt > now)
  })

  return {
    createSession(session, replaces) {
      return settle(() => {
        use()
        createSession.immediate(session, replaces)
        wrote()
      })
    },
    findSession(tenant, idHash) {
      return settle(() => {
        use()
        const row = selectSession.get(tenant, idHash)
        return row === undefined ? undefined : parseSessionRow(row)
      })
    },
    endSession(tenant, sid, now) {
      return settle(() => {
        use()
        const ended = endSession.immediate(tenant, sid, now)
        wrote()
        return ended
      })
    },
  }
}
