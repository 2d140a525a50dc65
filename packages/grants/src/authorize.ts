import type { Client } from '@tessera/config-schema'
import { isConfidentialClient } from './client-auth.js'
import { findClient } from './client-lookup.js'
import type { TenantContext } from './context.js'
import { OAuthError } from './errors.js'
import type { OAuthErrorCode } from './errors.js'
import { redirectTo } from './internal/issue-code.js'
import { isRegisteredRedirectUri } from './internal/redirect-uri.js'
import { hasOpenIdScope } from './openid/claims.js'
import { isS256Challenge } from './pkce.js'
import { findResources } from './resource.js'
import { isJwkThumbprint } from './dpop/binding.js'
import { narrowScope } from './scope.js'

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
  /** The resources (RFC 8707) it names, as configured; absent when it names none. */
  resources?: string[]
  /** `dpop_jkt` (RFC 9449 §10): the code will be redeemed only with a proof of that key. */
  dpopJkt?: string
  /**
   * `prompt` holds `consent`: a client the tenant does not list asks the user again, whatever
   * they consented to before. Read with or without `openid`, since OAuth clients such as MCP's
   * send it too (OpenID Connect Core §3.1.2.1).
   */
  promptConsent?: true
}

/** What the authorization endpoint does with a request. */
export type AuthorizeOutcome =
  /** Client or redirect_uri cannot be trusted: show an error page, never redirect (§4.1.2.1). */
  | { kind: 'error-page'; description: string }
  /** Send the browser here (an error response, or the code after a successful sign-in). */
  | { kind: 'redirect'; location: string }
  /** Show the login form for this request. */
  | { kind: 'login'; request: AuthorizationRequest }

/** An error response to the client's redirect_uri, with `state` and `iss`. */
export function errorRedirect(
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
export async function parseAuthorizationRequest(
  query: Iterable<[string, string]>,
  tenant: TenantContext,
): Promise<AuthorizeOutcome> {
  const { params, repeated, resourceUris } = readQuery(query)
  const clientId = params.get('client_id')
  if (clientId === undefined || repeated.has('client_id')) {
    return { kind: 'error-page', description: 'The request has no valid client_id.' }
  }
  const client = await lookUpClient(tenant, clientId)
  if ('kind' in client) return client
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
  let resources: string[]
  try {
    resources = findResources(tenant, resourceUris)
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
  const promptConsent =
    openid?.prompt.includes('consent') ??
    (params.get('prompt') ?? '').split(' ').includes('consent')
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
  const dpopJkt = params.get('dpop_jkt')
  if (dpopJkt !== undefined && !isJwkThumbprint(dpopJkt)) {
    return fail('invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint')
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
      ...(resources.length === 0 ? {} : { resources }),
      ...(dpopJkt === undefined ? {} : { dpopJkt }),
      ...(promptConsent ? { promptConsent: true as const } : {}),
    },
  }
}

/** The parameters of an authorization request, the names sent more than once, and its resources. */
function readQuery(query: Iterable<[string, string]>): {
  params: Map<string, string>
  repeated: Set<string>
  resourceUris: string[]
} {
  const params = new Map<string, string>()
  const repeated = new Set<string>()
  // RFC 8707 §2: `resource` is the one parameter that may be repeated.
  const resourceUris: string[] = []
  for (const [name, value] of query) {
    if (name === 'resource') {
      if (value !== '') resourceUris.push(value)
      continue
    }
    if (params.has(name)) repeated.add(name)
    // RFC 6749 §3.1: parameters sent without a value are treated as omitted.
    if (value !== '') params.set(name, value)
  }
  return { params, repeated, resourceUris }
}

/** The client a request names, or the error page for an unknown or unusable one. */
async function lookUpClient(
  tenant: TenantContext,
  clientId: string,
): Promise<Client | Extract<AuthorizeOutcome, { kind: 'error-page' }>> {
  try {
    const client = await findClient(tenant, clientId)
    return client ?? { kind: 'error-page', description: 'The client is not known to this server.' }
  } catch (error) {
    if (error instanceof OAuthError) return { kind: 'error-page', description: error.description }
    throw error
  }
}
