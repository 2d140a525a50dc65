import type { AuthorizationRequest } from '../authorize.js'
import type { LoginOutcome, LoginSubmission } from '../login-form.js'
import type { GrantDeps, TenantContext } from '../context.js'
import { issueCodeOrAskConsent } from '../consent.js'
import type { SessionRecord } from '../ports.js'
import { findSession } from './session.js'

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

/**
 * The "Continue as …" page's submission: a code from the browser's live session, if it is still
 * the session `sid` the page named; else (it ended, or another user signed in meanwhile) the
 * login form. A client the user must consent to gets the consent page instead of the code.
 */
export async function continueSession(
  request: AuthorizationRequest,
  sid: string,
  form: LoginSubmission,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<LoginOutcome> {
  const { session } = await findSession(form.sessionValue, form.address, tenant, deps)
  if (session?.sid !== sid) {
    return { kind: 'retry', request, message: 'Your sign-in has ended. Sign in again.' }
  }
  const signIn = { authTime: session.authTime, sid: session.sid }
  const next = await issueCodeOrAskConsent(
    request,
    { sub: session.sub, claims: session.claims, signIn },
    tenant,
    deps,
  )
  return next.kind === 'code' ? { kind: 'redirect', location: next.location } : next
}
