import type { Client } from '@tessera/config-schema'
import { isConfidentialClient } from './client-auth.js'
import type { GrantDeps, TenantContext } from './context.js'
import { randomToken, sha256 } from './crypto.js'
import { OAuthError } from './errors.js'
import type { OAuthErrorCode } from './errors.js'
import { issueCode, redirectTo } from './internal/issue-code.js'
import { loginSealKey, openLogin, sealLogin } from './internal/login-seal.js'
import { isLoopbackRedirectUri, isRegisteredRedirectUri } from './internal/redirect-uri.js'
import { hasOpenIdScope } from './openid/claims.js'
import { continueSession, sessionUserName } from './openid/loopback-consent.js'
import { findSession, startSession } from './openid/session.js'
import type { SessionCookie } from './openid/session.js'
import { isS256Challenge } from './pkce.js'
import { narrowScope } from './scope.js'
import { checkPasswordThrottled } from './throttle.js'
import { throttleRefusal } from './throttle-refusal.js'

/** OpenID Connect Core §3.1.2.1 `prompt` values. */
export const PROMPT_VALUES = ['none', 'login', 'consent', 'select_account'] as const
export type Prompt = (typeof PROMPT_VALUES)[number]

/** The OpenID Connect parameters of an authorization request whose scope holds `openid`. */
export interface OpenIdRequest {
  /** Echoed byte for byte in the ID token of the code grant. */
  nonce?: string
  prompt: readonly Prompt[]
  /** Seconds: an older sign-in must be repeated. */
  maxAge?: number
  /** Pre-fills the username field. */
  loginHint?: string
}

/** A validated authorization request, waiting for the user to sign in. */
export interface AuthorizationRequest {
  client: Client
  redirectUri: string
  /** The client's `state`, byte for byte. */
  state?: string
  /** Granted scopes, space-separated. */
  scope: string
  codeChallenge?: string
  /** Present exactly when `scope` holds `openid`: an OpenID Connect authentication request. */
  openid?: OpenIdRequest
}

/** What the authorization endpoint does with a request. */
export type AuthorizeOutcome =
  /** Client or redirect_uri cannot be trusted: show an error page, never redirect (§4.1.2.1). */
  | { kind: 'error-page'; description: string }
  /** Send the browser here (an error response, or the code after a successful sign-in). */
  | { kind: 'redirect'; location: string }
  /** Show the login form for this request. */
  | { kind: 'login'; request: AuthorizationRequest }

/** What an OpenID Connect request becomes once the browser's session is known. */
export type SessionOutcome =
  /** A code from the session, or `login_required` for `prompt=none`. */
  | { kind: 'redirect'; location: string; clearSession: boolean }
  | { kind: 'login'; request: AuthorizationRequest; clearSession: boolean }
  /**
   * A live session and a loopback redirect URI: the user confirms with one click ("Continue as
   * `userName`") before a code goes to whatever program listens on that port.
   */
  | {
      kind: 'confirm'
      request: AuthorizationRequest
      userName: string
      /** The session's `sid`, for the form's seal (see {@link BeginLoginOptions}). */
      sid: string
      clearSession: false
    }

/** What the login form's submission leads to. */
export type LoginOutcome =
  | { kind: 'error-page'; description: string }
  /** `session`: the cookie of the session this login started (OpenID Connect requests only). */
  | { kind: 'redirect'; location: string; session?: SessionCookie }
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

function errorRedirect(
  redirectUri: string,
  state: string | undefined,
  issuer: string,
  code: OAuthErrorCode,
  description: string,
): AuthorizeOutcome {
  // RFC 9207: `iss` lets the client tell which server answered (mix-up defence).
  return {
    kind: 'redirect',
    location: redirectTo(redirectUri, {
      error: code,
      error_description: description,
      state,
      iss: issuer,
    }),
  }
}

/**
 * The longest `state` accepted, in characters. It travels inside the sealed login form and back
 * in the redirect; RFC 6749 sets no limit, and a client needs far less than this for its CSRF
 * value or a reference to its own session.
 */
export const MAX_STATE_LENGTH = 1024

/** The longest `nonce` accepted, in characters: like `state`, it travels in the sealed form. */
export const MAX_NONCE_LENGTH = 1024

/** The longest `login_hint` used; a longer one is ignored (it only pre-fills a field). */
export const MAX_LOGIN_HINT_LENGTH = 256

function codePoints(value: string, limit = MAX_STATE_LENGTH): number {
  // Only a string longer in UTF-16 units than the limit can be longer in characters.
  return value.length <= limit ? value.length : Array.from(value).length
}

/**
 * The OpenID Connect parameters (Core §3.1.2.1), or the error to redirect with. Parameters this
 * server does not implement (`display`, `ui_locales`, `acr_values`, `id_token_hint`, `claims`)
 * are ignored, as §3.1.2.1 allows; `request` and `request_uri` are refused (§6).
 */
function parseOpenIdRequest(
  params: ReadonlyMap<string, string>,
): OpenIdRequest | { error: OAuthErrorCode; description: string } {
  if (params.has('request')) {
    return { error: 'request_not_supported', description: 'request objects are not supported' }
  }
  if (params.has('request_uri')) {
    return {
      error: 'request_uri_not_supported',
      description: 'request_uri is not supported',
    }
  }
  const nonce = params.get('nonce')
  if (nonce !== undefined && codePoints(nonce, MAX_NONCE_LENGTH) > MAX_NONCE_LENGTH) {
    return {
      error: 'invalid_request',
      description: `nonce must be at most ${MAX_NONCE_LENGTH} characters`,
    }
  }
  const prompt: Prompt[] = []
  for (const value of (params.get('prompt') ?? '').split(' ')) {
    if (value === '' || prompt.includes(value as Prompt)) continue
    if (!(PROMPT_VALUES as readonly string[]).includes(value)) {
      return { error: 'invalid_request', description: `unsupported prompt value: ${value}` }
    }
    prompt.push(value as Prompt)
  }
  if (prompt.includes('none') && prompt.length > 1) {
    return { error: 'invalid_request', description: 'prompt=none cannot be combined with others' }
  }
  if (prompt.includes('none') && nonce === undefined) {
    return { error: 'invalid_request', description: 'nonce is required with prompt=none' }
  }
  const maxAgeText = params.get('max_age')
  if (maxAgeText !== undefined && !/^\d{1,10}$/.test(maxAgeText)) {
    return {
      error: 'invalid_request',
      description: 'max_age must be a non-negative whole number of seconds',
    }
  }
  const loginHint = params.get('login_hint')
  return {
    prompt,
    ...(nonce === undefined ? {} : { nonce }),
    ...(maxAgeText === undefined ? {} : { maxAge: Number(maxAgeText) }),
    ...(loginHint === undefined ||
    codePoints(loginHint, MAX_LOGIN_HINT_LENGTH) > MAX_LOGIN_HINT_LENGTH
      ? {}
      : { loginHint }),
  }
}

/**
 * Validates an authorization request (`response_type=code` with PKCE S256). Problems with the
 * client or redirect_uri are never redirected; every other problem is (RFC 6749 §4.1.2.1).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.3
 */
export function parseAuthorizationRequest(
  query: Iterable<[string, string]>,
  tenant: TenantContext,
): AuthorizeOutcome {
  const params = new Map<string, string>()
  const repeated = new Set<string>()
  for (const [name, value] of query) {
    if (params.has(name)) repeated.add(name)
    // RFC 6749 §3.1: parameters sent without a value are treated as omitted.
    if (value !== '') params.set(name, value)
  }
  const clientId = params.get('client_id')
  if (clientId === undefined || repeated.has('client_id')) {
    return { kind: 'error-page', description: 'The request has no valid client_id.' }
  }
  const client = tenant.clients.get(clientId.toLowerCase())
  if (client === undefined) {
    return { kind: 'error-page', description: 'The client is not known to this server.' }
  }
  const redirectUri = params.get('redirect_uri')
  if (redirectUri === undefined || repeated.has('redirect_uri')) {
    return { kind: 'error-page', description: 'The request has no valid redirect_uri.' }
  }
  // Exact string comparison (RFC 9700 §4.1.3): no prefix, path or query leeway; only a loopback
  // URI's port may differ (RFC 8252 §7.3).
  if (!isRegisteredRedirectUri(client.redirectUris, redirectUri)) {
    return {
      kind: 'error-page',
      description: 'The redirect_uri is not registered for this client.',
    }
  }
  const state = repeated.has('state') ? undefined : params.get('state')
  const fail = (code: OAuthErrorCode, description: string): AuthorizeOutcome =>
    errorRedirect(redirectUri, state, tenant.issuer, code, description)

  if (repeated.size > 0)
    return fail('invalid_request', `repeated parameter: ${[...repeated].join(', ')}`)
  if (state !== undefined && codePoints(state) > MAX_STATE_LENGTH) {
    return fail('invalid_request', `state must be at most ${MAX_STATE_LENGTH} characters`)
  }
  const responseType = params.get('response_type')
  if (responseType === undefined) return fail('invalid_request', 'response_type is required')
  if (responseType !== 'code') {
    return fail('unsupported_response_type', 'only response_type=code is supported')
  }
  if (!client.grantTypes.includes('authorization_code')) {
    return fail(
      'unauthorized_client',
      'the authorization_code grant is not enabled for this client',
    )
  }
  let scope: string
  try {
    scope = narrowScope(params.get('scope'), client.scopes).join(' ')
  } catch (error) {
    if (error instanceof OAuthError) return fail(error.code, error.description)
    throw error
  }
  let openid: OpenIdRequest | undefined
  if (hasOpenIdScope(scope)) {
    const parsed = parseOpenIdRequest(params)
    if ('error' in parsed) return fail(parsed.error, parsed.description)
    openid = parsed
  }
  const challenge = params.get('code_challenge')
  const method = params.get('code_challenge_method')
  if (challenge === undefined) {
    if (method !== undefined)
      return fail('invalid_request', 'code_challenge_method without code_challenge')
    if (!isConfidentialClient(client)) {
      return fail(
        'invalid_request',
        'PKCE is required: send code_challenge with code_challenge_method=S256',
      )
    }
  } else {
    // RFC 7636 §4.3 defaults a missing method to "plain", which is refused (RFC 9700 §2.1.1).
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256')
    if (!isS256Challenge(challenge)) return fail('invalid_request', 'malformed code_challenge')
  }
  return {
    kind: 'login',
    request: {
      client,
      redirectUri,
      scope,
      ...(state === undefined ? {} : { state }),
      ...(challenge === undefined ? {} : { codeChallenge: challenge }),
      ...(openid === undefined ? {} : { openid }),
    },
  }
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
    // RFC 8252 §8.3: any program on the device can listen on a loopback port and ask for a code
    // there; without a click the signed-in user would not know (RFC 9700 §4.1.3 wants consent).
    if (isLoopbackRedirectUri(request.redirectUri)) {
      if (openid.prompt.includes('none')) {
        return promptNoneError(request, tenant, 'consent_required', false)
      }
      const userName = sessionUserName(session)
      return { kind: 'confirm', request, userName, sid: session.sid, clearSession: false }
    }
    const location = await issueCode(
      request,
      { sub: session.sub, claims: session.claims },
      { authTime: session.authTime, sid: session.sid },
      tenant,
      deps,
    )
    return { kind: 'redirect', location, clearSession: false }
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
      : 'the user must confirm a sign-in to an app on this device'
  const error = errorRedirect(request.redirectUri, request.state, tenant.issuer, code, description)
  if (error.kind !== 'redirect') throw new Error('unreachable: errorRedirect redirects')
  return { kind: 'redirect', location: error.location, clearSession }
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
   * A "Continue as …" form (a `confirm` outcome of {@link resumeSession}): the session's `sid`.
   * Posted, such a form asks for no password; it gets a code from that session only.
   */
  sid?: string
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
 * stores a code and redirects with `code`, `state` and `iss`.
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
  const client = tenant.clients.get(sealed.clientId)
  if (
    client === undefined ||
    !stillAllowed(client, sealed.redirectUri, sealed.scope, sealed.codeChallenge)
  ) {
    return expired
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
    // The form already answered prompt and max_age: a sign-in is what they asked for.
    ...(hasOpenIdScope(sealed.scope)
      ? { openid: { prompt: [], ...(sealed.nonce === undefined ? {} : { nonce: sealed.nonce }) } }
      : {}),
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

  if (request.openid === undefined) {
    return { kind: 'redirect', location: await issueCode(request, user, undefined, tenant, deps) }
  }
  const started = await startSession(user, form.sessionValue, tenant, deps)
  const location = await issueCode(
    request,
    user,
    { authTime: started.session.authTime, sid: started.session.sid },
    tenant,
    deps,
  )
  return { kind: 'redirect', location, session: started.cookie }
}
