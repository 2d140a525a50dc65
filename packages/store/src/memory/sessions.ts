import type { SessionStore } from '@tessera/grants'
import { conflictError } from '../internal/checks.js'
import { settle } from '../internal/settle.js'
import { copySession } from './records.js'
import type { GrantTables } from './table.js'

/**
 * Sign-in sessions in `tables`; a logout also consumes the codes and revokes the families of its
 * sid there. `open` throws once the store is closed.
 */
export function createMemorySessions(
  open: () => void,
  tables: GrantTables,
): {
  store: SessionStore
  /** Deletes the sessions expired or ended at `now`; returns how many. */
  sweep: (now: number) => number
} {
  const { sessions, codes, families } = tables
  const store: SessionStore = {
    createSession(session, replaces) {
      return settle(() => {
        open()
        if (sessions.has(session.tenant, session.idHash)) throw conflictError('the session')
        if (replaces !== undefined) {
          const previous = sessions.get(session.tenant, replaces)
          if (previous !== undefined) previous.endedAt ??= session.createdAt
        }
        sessions.set(session.tenant, session.idHash, copySession(session))
      })
    },
    findSession(tenant, idHash) {
      return settle(() => {
        open()
        const session = sessions.get(tenant, idHash)
        return session === undefined ? undefined : copySession(session)
      })
    },
    endSession(tenant, sid, now) {
      return settle(() => {
        open()
        let ended = false
        for (const session of sessions.rows(tenant)) {
          if (session.sid !== sid || session.endedAt !== undefined) continue
          if (session.expiresAt > now) ended = true
          session.endedAt = now
        }
        for (const code of codes.rows(tenant)) {
          if (code.sid === sid) code.consumedAt ??= now
        }
        for (const family of families.rows(tenant)) {
          if (family.sid === sid) family.revokedAt ??= now
        }
        return ended
      })
    },
  }
  return {
    store,
    sweep: (now) =>
      sessions.deleteWhere(
        (session) =>
          session.expiresAt <= now || (session.endedAt !== undefined && session.endedAt <= now),
      ),
  }
}
