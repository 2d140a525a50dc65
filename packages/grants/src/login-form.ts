import type { Client } from '@tessera/config-schema'
import type { AuthorizationRequest } from './authorize.js'
import { isConfidentialClient } from './client-auth.js'
import { findClient } from './client-lookup.js'
import { completeConsent, isConsentDecision, issueCodeOrAskConsent } from './consent.js'
import type { ConsentUser } from './consent.js'
import type { GrantDeps, TenantContext } from './context.js'
import { OAuthError } from './errors.js'
import { randomToken, sha256 } from './crypto.js'
import { loginSealKey, openLogin, sealLogin } from './internal/login-seal.js'
import { isRegisteredRedirectUri } from './internal/redirect-uri.js'
import { hasOpenIdScope } from './openid/claims.js'
import { continueSession } from './openid/loopback-consent.js'
import { startSession } from './openid/session.js'
import type { SessionCookie } from './openid/session.js'
import { checkPasswordThrottled } from './throttle.js'
import { throttleRefusal } from './throttle-refusal.js'

/** What the login form's submission leads to. */
export type LoginOutcome =
  | { kind: 'error-page'; description: string }
  /** `session`: the cookie of the session this login started (OpenID Connect requests only). */
  | { kind: 'redirect'; location: string; session?: SessionCookie }
  /**
   * The user signed in, and the client is one they must consent to first: show the consent
   * page, sealed by `beginLogin` with `{ user }`; `session` as for `redirect`.
   */
  | { kind: 'consent'; request: AuthorizationRequest; user: ConsentUser; session?: SessionCookie }
  /**
   * Show the form again (with a new seal) and this message; `status` 429 or 503 when the
   * throttle refused or could not decide in time, with the seconds to wait.
   */
  | {
      kind: 'retry'
      request: AuthorizationRequest
      message: string
      status?: 429 | 503
      retryAfterSeconds?: number
    }

/** A login form ready to render: the sealed request goes into the form, the binding into a cookie. */
export interface LoginForm {
  /** The sealed pending request; the form posts it back as `csrf_token`. */
  csrfToken: string
  /** A fresh random value for the binding cookie. */
  bindingValue: string
  /** Epoch milliseconds after which the form is refused. */
  expiresAt: number
}

function bindingHash(bindingValue: string): string {
  return sha256(bindingValue).toString('base64url')
}

/** What else a sealed form carries (see {@link beginLogin}). */
export interface BeginLoginOptions {
  /**
   * A "Continue as …" form (a `confirm` outcome of `resumeSession`, single-sign-on.ts): the session's `sid`.
   * Posted, such a form asks for no password; it gets a code from that session only.
   */
  sid?: string
  /**
   * A consent form (a `consent` outcome): the signed-in user it asks. Posted with `decision`
   * `allow`, such a form gets a code for that user; with `deny`, `access_denied`.
   */
  user?: ConsentUser
}

/**
 * Seals a validated request into a login form, bound to a fresh browser cookie: nothing is
 * stored, so an unauthenticated GET can never grow the database. A cookie the browser already
 * has is never reused: a value that an attacker planted could bind a form of theirs to the
 * victim's browser (login CSRF).
 */
export async function beginLogin(
  request: AuthorizationRequest,
  tenant: TenantContext,
  deps: Pick<GrantDeps, 'secrets' | 'loginTtlSeconds' | 'clock'>,
  options: BeginLoginOptions = {},
): Promise<LoginForm> {
  const bindingValue = randomToken()
  // A whole second: the seal's `exp` is a NumericDate.
  const expiresAt = Math.floor((deps.clock() + deps.loginTtlSeconds * 1000) / 1000) * 1000
  const csrfToken = await sealLogin(
    {
      id: randomToken(),
      tenant: tenant.name,
      clientId: request.client.clientId,
      redirectUri: request.redirectUri,
      scope: request.scope,
      ...(request.state === undefined ? {} : { state: request.state }),
      ...(request.codeChallenge === undefined ? {} : { codeChallenge: request.codeChallenge }),
      ...(request.openid?.nonce === undefined ? {} : { nonce: request.openid.nonce }),
      ...(options.sid === undefined ? {} : { sid: options.sid }),
      ...(options.user === undefined ? {} : { user: options.user }),
      ...(request.resources === undefined ? {} : { resources: request.resources }),
      ...(request.dpopJkt === undefined ? {} : { dpopJkt: request.dpopJkt }),
      ...(request.promptConsent === true ? { promptConsent: true as const } : {}),
      bindingHash: bindingHash(bindingValue),
      expiresAt,
    },
    await loginSealKey(deps.secrets),
  )
  return { csrfToken, bindingValue, expiresAt }
}

/**
 * The client as configured now still allows what the form was sealed for: configuration may
 * have changed while the user was typing.
 */
function stillAllowed(
  client: Client,
  redirectUri: string,
  scope: string,
  challenge: string | undefined,
): boolean {
  return (
    client.grantTypes.includes('authorization_code') &&
    isRegisteredRedirectUri(client.redirectUris, redirectUri) &&
    (scope === '' || scope.split(' ').every((token) => client.scopes.includes(token))) &&
    (challenge !== undefined || isConfidentialClient(client))
  )
}

/** The fields the login form posts. */
export interface LoginSubmission {
  /** The sealed request the form carries (see {@link beginLogin}). */
  csrfToken: string | undefined
  username: string | undefined
  password: string | undefined
  /** A consent form's button: `allow` or `deny`. */
  decision?: string | undefined
  /** The browser-binding cookie, if the browser sent it. */
  bindingValue: string | undefined
  /** The session cookie, if the browser sent one (OpenID Connect requests only read it). */
  sessionValue?: string | undefined
  address: string
}

const WRONG_CREDENTIALS = 'Invalid username or password.'

/**
 * Handles the login form: opens the seal, checks the browser binding, spends the form (once,
 * across replicas), checks the credentials (throttled like the password grant) and, on success,
 * stores a code and redirects with `code`, `state` and `iss`, or, for a client the user must
 * consent to, answers the consent page. The "Continue as …" and consent forms come here too:
 * their seal says which they are (see `continueSession` and `completeConsent`).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2
 * @see https://www.rfc-editor.org/rfc/rfc9207
 */
export async function completeLogin(
  form: LoginSubmission,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<LoginOutcome> {
  const expired: LoginOutcome = {
    kind: 'error-page',
    description:
      'This sign-in form has expired or was already used. Go back to the application and sign in again.',
  }
  if (form.csrfToken === undefined) {
    return { kind: 'error-page', description: 'The sign-in form is missing its CSRF token.' }
  }
  const now = deps.clock()
  const sealed = await openLogin(form.csrfToken, tenant.name, await loginSealKey(deps.secrets), now)
  if (sealed === undefined) return expired
  if (form.bindingValue === undefined || bindingHash(form.bindingValue) !== sealed.bindingHash) {
    return {
      kind: 'error-page',
      description:
        'This sign-in form belongs to another browser session, or a newer one was opened in another tab. Sign in again from the application.',
    }
  }
  let client: Client | undefined
  try {
    client = await findClient(tenant, sealed.clientId)
  } catch (error) {
    if (error instanceof OAuthError) return { kind: 'error-page', description: error.description }
    throw error
  }
  if (
    client === undefined ||
    !stillAllowed(client, sealed.redirectUri, sealed.scope, sealed.codeChallenge)
  ) {
    return expired
  }
  if (sealed.user !== undefined && !isConsentDecision(form.decision)) {
    return { kind: 'error-page', description: 'Answer the consent form with Allow or Deny.' }
  }
  // Spent only after the checks above: a form posted from another browser must not use up the
  // user's own. The mark is atomic across replicas, so of two posts of one form one gets here.
  if (!(await deps.marks.mark(tenant.name, 'login', sealed.id, sealed.expiresAt, now))) {
    return expired
  }
  const request: AuthorizationRequest = {
    client,
    redirectUri: sealed.redirectUri,
    scope: sealed.scope,
    ...(sealed.state === undefined ? {} : { state: sealed.state }),
    ...(sealed.codeChallenge === undefined ? {} : { codeChallenge: sealed.codeChallenge }),
    ...(sealed.resources === undefined ? {} : { resources: sealed.resources }),
    ...(sealed.dpopJkt === undefined ? {} : { dpopJkt: sealed.dpopJkt }),
    ...(sealed.promptConsent === undefined ? {} : { promptConsent: sealed.promptConsent }),
    // The form already answered prompt and max_age: a sign-in is what they asked for.
    ...(hasOpenIdScope(sealed.scope)
      ? { openid: { prompt: [], ...(sealed.nonce === undefined ? {} : { nonce: sealed.nonce }) } }
      : {}),
  }
  if (sealed.user !== undefined && isConsentDecision(form.decision)) {
    return completeConsent(request, sealed.user, form.decision, form, tenant, deps)
  }
  if (sealed.sid !== undefined && request.openid !== undefined) {
    return continueSession(request, sealed.sid, form, tenant, deps)
  }
  if (form.username === undefined || form.password === undefined) {
    return { kind: 'retry', request, message: 'Enter your username and password.' }
  }

  let user
  try {
    user = await checkPasswordThrottled(
      {
        tenant: tenant.name,
        username: form.username,
        password: form.password,
        address: form.address,
      },
      tenant.users,
      deps,
    )
  } catch (error) {
    const refusal = throttleRefusal(error)
    if (refusal === undefined) throw error
    return { kind: 'retry', request, ...refusal }
  }
  // The same message whether or not the user exists, so the form reveals no usernames.
  if (user === null) return { kind: 'retry', request, message: WRONG_CREDENTIALS }

  const signedIn: ConsentUser = { sub: user.sub, claims: user.claims ?? {} }
  if (request.openid === undefined) {
    const next = await issueCodeOrAskConsent(request, signedIn, tenant, deps)
    return next.kind === 'code' ? { kind: 'redirect', location: next.location } : next
  }
  const started = await startSession(user, form.sessionValue, tenant, deps)
  const { authTime, sid } = started.session
  const next = await issueCodeOrAskConsent(
    request,
    { ...signedIn, signIn: { authTime, sid } },
    tenant,
    deps,
  )
  return next.kind === 'code'
    ? { kind: 'redirect', location: next.location, session: started.cookie }
    : { ...next, session: started.cookie }
}
