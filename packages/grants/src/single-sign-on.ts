import type { AuthorizationRequest } from './authorize.js'
import { errorRedirect } from './authorize.js'
import { issueCodeOrAskConsent, needsConsent } from './consent.js'
import type { ConsentUser } from './consent.js'
import type { GrantDeps, TenantContext } from './context.js'
import { isLoopbackRedirectUri } from './internal/redirect-uri.js'
import { sessionUserName } from './openid/loopback-consent.js'
import { findSession } from './openid/session.js'

/** What an OpenID Connect request becomes once the browser's session is known. */
export type SessionOutcome =
  /** A code from the session, or `login_required` for `prompt=none`. */
  | { kind: 'redirect'; location: string; clearSession: boolean }
  | { kind: 'login'; request: AuthorizationRequest; clearSession: boolean }
  /**
   * A live session, and a client the user must consent to first (see `needsConsent`,
   * consent.ts): the consent page. For a loopback redirect URI it also stands for the
   * "Continue as" click.
   */
  | { kind: 'consent'; request: AuthorizationRequest; user: ConsentUser; clearSession: false }
  /**
   * A live session and a loopback redirect URI: the user confirms with one click ("Continue as
   * `userName`") before a code goes to whatever program listens on that port.
   */
  | {
      kind: 'confirm'
      request: AuthorizationRequest
      userName: string
      /** The session's `sid`, for the form's seal (see `BeginLoginOptions` in login-form.ts). */
      sid: string
      clearSession: false
    }

/** The browser's side of an OpenID Connect request: its session cookie and address. */
export interface BrowserSession {
  /** The session cookie's value, if the browser sent one. */
  cookie: string | undefined
  address: string
}

/**
 * Single sign-on for an OpenID Connect request (OpenID Connect Core §3.1.2.3): with a live
 * session that `prompt=login` and `max_age` do not rule out, a code at once, without the form;
 * otherwise the form, or `login_required` for `prompt=none`. A request without `openid` always
 * goes to the form, and its cookie is never read.
 */
export async function resumeSession(
  request: AuthorizationRequest,
  browser: BrowserSession,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<SessionOutcome> {
  const { openid } = request
  if (openid === undefined) return { kind: 'login', request, clearSession: false }
  const forceLogin = openid.prompt.includes('login') || openid.maxAge === 0
  const found = forceLogin
    ? { clear: false }
    : await findSession(browser.cookie, browser.address, tenant, deps)
  const now = deps.clock()
  const { session } = found
  if (
    session !== undefined &&
    (openid.maxAge === undefined || now - session.authTime <= openid.maxAge * 1000)
  ) {
    const user: ConsentUser = {
      sub: session.sub,
      claims: session.claims,
      signIn: { authTime: session.authTime, sid: session.sid },
    }
    // RFC 8252 §8.3: any program on the device can listen on a loopback port and ask for a code
    // there; without a click the signed-in user would not know (RFC 9700 §4.1.3 wants consent).
    if (isLoopbackRedirectUri(request.redirectUri)) {
      if (openid.prompt.includes('none')) {
        return promptNoneError(request, tenant, 'consent_required', false)
      }
      // The consent page's Allow is a click as well: one page asks both questions.
      if (await needsConsent(request, session.sub, tenant, deps)) {
        return { kind: 'consent', request, user, clearSession: false }
      }
      const userName = sessionUserName(session)
      return { kind: 'confirm', request, userName, sid: session.sid, clearSession: false }
    }
    const next = await issueCodeOrAskConsent(request, user, tenant, deps)
    if (next.kind === 'code')
      return { kind: 'redirect', location: next.location, clearSession: false }
    if (openid.prompt.includes('none')) {
      return promptNoneError(request, tenant, 'consent_required', false)
    }
    return { ...next, clearSession: false }
  }
  if (openid.prompt.includes('none')) {
    return promptNoneError(request, tenant, 'login_required', found.clear)
  }
  return { kind: 'login', request, clearSession: found.clear }
}

/** The answer to `prompt=none` when the user would have to see a page (OpenID Connect §3.1.2.6). */
function promptNoneError(
  request: AuthorizationRequest,
  tenant: TenantContext,
  code: 'login_required' | 'consent_required',
  clearSession: boolean,
): SessionOutcome {
  const description =
    code === 'login_required'
      ? 'the user is not signed in'
      : 'the user must confirm this sign-in to the application'
  const error = errorRedirect(request.redirectUri, request.state, tenant.issuer, code, description)
  if (error.kind !== 'redirect') throw new Error('unreachable: errorRedirect redirects')
  return { kind: 'redirect', location: error.location, clearSession }
}
