import type { SessionRecord } from '../ports.js'

/**
 * What the "Continue as …" page calls the signed-in user: the session's `name`, else its
 * `preferred_username`, else its `sub`. The provider's claims are JSON, so either may be
 * anything; only a non-empty string is shown.
 */
export function sessionUserName(session: Pick<SessionRecord, 'sub' | 'claims'>): string {
  for (const claim of ['name', 'preferred_username']) {
    const value = session.claims[claim]
    if (typeof value === 'string' && value.trim() !== '') return value
  }
  return session.sub
}
