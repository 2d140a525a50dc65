import { timingSafeEqual } from 'node:crypto'
import type { Client } from '@tessera/config-schema'
import { decodeJwt } from 'jose'
import {
  CLIENT_ASSERTION_TYPE,
  MAX_CLIENT_ASSERTION_LENGTH,
  verifyClientAssertion,
} from './client-assertion.js'
import { clientAuthKeys, countFailure, refuseWhenThrottled } from './client-auth-throttle.js'
import type { ClientAuthAttempt } from './client-auth-throttle.js'
import { findClient } from './client-lookup.js'
import type { GrantDeps, TenantContext } from './context.js'
import { sha256 } from './crypto.js'
import { OAuthError } from './errors.js'
import type { ClientAuthFailureReason } from './errors.js'
import type { TokenParams } from './request.js'

/** How the client proved who it is (RFC 8414 token_endpoint_auth_methods). */
export type ClientAuthMethod =
  'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none'

export interface AuthenticatedClient {
  client: Client
  method: ClientAuthMethod
}

/** A request to an endpoint that authenticates clients, as the HTTP edge hands it over. */
export interface ClientAuthRequest {
  params: TokenParams
  /** The raw `Authorization` header, if any. */
  authorization: string | undefined
  /** The endpoint called: its URL is also an accepted `aud` of a client assertion. */
  endpoint: 'token' | 'revoke' | 'introspect'
  /** The client's network address: failed authentications are counted per address. */
  address: string
}

/** What client authentication needs of the grant dependencies. */
export type ClientAuthDeps = Pick<
  GrantDeps,
  'clientKeys' | 'marks' | 'clock' | 'clientAuthFailures' | 'clientAuthPolicy'
>

interface PresentedCredentials {
  /** The client_id as presented; with HTTP Basic, first form-decoded, then as sent. */
  clientIds: string[]
  /**
   * The secret, absent when none was presented. With HTTP Basic it is two: form-decoded (RFC
   * 6749 §2.3.1) and as sent, which some client libraries do not encode.
   */
  clientSecrets: [string, string] | undefined
  basic: boolean
  /** An HTTP Basic header without `id:secret` in it. */
  malformed?: true
}

/** The credentials of a request, read but not yet checked. */
type Presented =
  | { kind: 'assertion'; assertion: string; clientId: string | undefined }
  | { kind: 'secret'; credentials: PresentedCredentials }

type Fail = (reason: ClientAuthFailureReason, description: string, detail?: string) => OAuthError

/**
 * Whether `client` is confidential: it can authenticate, with a secret or a key. Only those may
 * skip PKCE or introspect.
 */
export function isConfidentialClient(client: Client): boolean {
  return (
    client.clientSecret !== undefined ||
    client.clientSecretHash !== undefined ||
    client.tokenEndpointAuthMethod === 'private_key_jwt'
  )
}

/**
 * Authenticates the client of a request to /token, /revoke or /introspect by exactly one of:
 * `client_secret` in the body, HTTP Basic, or a `private_key_jwt` client assertion (RFC 7523);
 * public clients present their client_id alone. A client configured with a
 * `token_endpoint_auth_method` must use that one; a key client never falls back to a secret.
 * Secrets are compared in constant time.
 *
 * Throttled: before any credential is checked, a request whose client_id+address or address
 * has its window full of failures is refused with `temporarily_unavailable` (counting nothing);
 * every `invalid_client` is then counted on both (see client-auth-throttle.ts). A success
 * clears nothing. Malformed requests (`invalid_request`) are neither refused nor counted.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 * @see https://www.rfc-editor.org/rfc/rfc7523#section-2.2
 */
export async function authenticateClient(
  request: ClientAuthRequest,
  tenant: Pick<TenantContext, 'name' | 'issuer' | 'clients' | 'dynamicClients'>,
  deps: ClientAuthDeps,
): Promise<AuthenticatedClient> {
  const presented = present(request)
  const attempt: ClientAuthAttempt = {
    tenant: tenant.name,
    clientId: claimedClientId(presented, tenant.clients),
    address: request.address,
    endpoint: request.endpoint,
  }
  const keys = clientAuthKeys(attempt, deps)
  await refuseWhenThrottled(attempt, keys, deps)
  const basic = presented.kind === 'secret' && presented.credentials.basic
  const fail: Fail = (reason, description, detail = description) =>
    new OAuthError('invalid_client', description, {
      ...(basic ? { challenge: 'Basic' as const } : {}),
      clientAuthFailure: { clientId: attempt.clientId, endpoint: attempt.endpoint, reason, detail },
    })
  try {
    return presented.kind === 'assertion'
      ? await authenticateByAssertion(presented, request, tenant, deps, fail)
      : await authenticateBySecret(presented.credentials, tenant, fail)
  } catch (error) {
    if (!(error instanceof OAuthError) || error.code !== 'invalid_client') throw error
    // The assertion's own checks name the rule broken; that is the detail logged.
    const failure =
      error.clientAuthFailure === undefined ? fail('bad_assertion', error.description) : error
    throw await countFailure(attempt, keys, failure, deps)
  }
}

/** Reads the credentials of a request; throws `invalid_request` for a malformed one. */
function present(request: ClientAuthRequest): Presented {
  const { params, authorization } = request
  const assertionType = params.client_assertion_type
  const assertion = params.client_assertion
  if (assertionType === undefined && assertion === undefined) {
    const credentials = readCredentials(params, authorization)
    if (credentials.clientIds.length === 0 && credentials.malformed !== true) {
      throw new OAuthError('invalid_request', 'client_id is required')
    }
    return { kind: 'secret', credentials }
  }
  if (assertionType !== CLIENT_ASSERTION_TYPE) {
    throw new OAuthError(
      'invalid_request',
      `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`,
    )
  }
  if (assertion === undefined) {
    throw new OAuthError(
      'invalid_request',
      'client_assertion is required with client_assertion_type',
    )
  }
  // RFC 6749 §2.3: a client must not use more than one authentication method per request.
  if (
    params.client_secret !== undefined ||
    (authorization !== undefined && BASIC.test(authorization))
  ) {
    throw new OAuthError(
      'invalid_request',
      'use one client authentication method: client_assertion, HTTP Basic or client_secret',
    )
  }
  return { kind: 'assertion', assertion, clientId: params.client_id ?? assertionSubject(assertion) }
}

/** The unverified `sub` of an assertion: whom it claims to be, to count a failure under. */
function assertionSubject(assertion: string): string | undefined {
  // Checked before anything decodes it: a huge assertion costs nothing but this comparison.
  if (assertion.length > MAX_CLIENT_ASSERTION_LENGTH) return undefined
  try {
    const { sub } = decodeJwt(assertion)
    return typeof sub === 'string' ? sub : undefined
  } catch {
    return undefined
  }
}

/** The client_id a failure counts under: a configured client's that the request names, or the first sent. */
function claimedClientId(
  presented: Presented,
  clients: ReadonlyMap<string, Client>,
): string | undefined {
  if (presented.kind === 'assertion') return presented.clientId
  const ids = presented.credentials.clientIds
  return ids.find((id) => clients.has(id.toLowerCase())) ?? ids[0]
}

async function authenticateByAssertion(
  presented: Extract<Presented, { kind: 'assertion' }>,
  request: ClientAuthRequest,
  tenant: Pick<TenantContext, 'name' | 'issuer' | 'clients' | 'dynamicClients'>,
  deps: ClientAuthDeps,
  fail: Fail,
): Promise<AuthenticatedClient> {
  const { assertion } = presented
  if (assertion.length > MAX_CLIENT_ASSERTION_LENGTH) {
    throw fail(
      'bad_assertion',
      `client_assertion is longer than ${MAX_CLIENT_ASSERTION_LENGTH} characters`,
    )
  }
  let sub: unknown
  try {
    sub = decodeJwt(assertion).sub
  } catch {
    throw fail('bad_assertion', 'client_assertion is not a well-formed signed JWT')
  }
  // RFC 7521 §4.2: client_id is optional; when sent it must name the assertion's subject.
  const clientId = presented.clientId
  if (clientId === undefined) throw fail('bad_assertion', 'client_assertion must have a sub claim')
  if (typeof sub === 'string' && sub.toLowerCase() !== clientId.toLowerCase()) {
    throw fail('bad_assertion', 'client_id differs from the sub of client_assertion')
  }
  const client = await findClient(tenant, clientId)
  if (client === undefined) {
    throw fail('unknown_client', 'client authentication failed', 'no such client')
  }
  if (client.tokenEndpointAuthMethod !== 'private_key_jwt') {
    throw fail(
      'wrong_method',
      'client authentication failed: this client does not use private_key_jwt',
    )
  }
  const { issuer } = tenant
  const audiences = [...new Set([issuer, `${issuer}/token`, `${issuer}/${request.endpoint}`])]
  await verifyClientAssertion(assertion, client, {
    tenant: tenant.name,
    audiences,
    now: deps.clock(),
    keys: deps.clientKeys,
    marks: deps.marks,
  })
  return { client, method: 'private_key_jwt' }
}

async function authenticateBySecret(
  presented: PresentedCredentials,
  tenant: Pick<TenantContext, 'clients' | 'dynamicClients'>,
  fail: Fail,
): Promise<AuthenticatedClient> {
  const failed = 'client authentication failed'
  if (presented.malformed === true) {
    throw fail('malformed_basic', 'malformed HTTP Basic credentials')
  }
  let client: Client | undefined
  for (const id of presented.clientIds) client ??= await findClient(tenant, id)
  if (client === undefined) {
    // Spend the same work as a real comparison so response time does not reveal client ids.
    secretMatches(presented.clientSecrets ?? ['', ''], UNKNOWN_CLIENT_DIGEST)
    throw fail('unknown_client', failed, 'no such client')
  }
  if (client.tokenEndpointAuthMethod === 'private_key_jwt') {
    throw fail('wrong_method', `${failed}: this client must use private_key_jwt`)
  }
  const expectedDigest = clientSecretDigest(client)
  if (expectedDigest === undefined) {
    if (presented.clientSecrets !== undefined) {
      throw fail('unexpected_secret', failed, 'a secret was sent for a public client')
    }
    return { client, method: 'none' }
  }
  if (presented.clientSecrets === undefined) {
    throw fail('missing_secret', failed, 'no secret was sent for a confidential client')
  }
  if (!secretMatches(presented.clientSecrets, expectedDigest)) {
    throw fail('wrong_secret', failed, 'the secret does not match')
  }
  const method = presented.basic ? 'client_secret_basic' : 'client_secret_post'
  const required = client.tokenEndpointAuthMethod
  if (required !== undefined && required !== method) {
    throw fail('wrong_method', `${failed}: this client must use ${required}`)
  }
  return { client, method }
}

const BASIC = /^basic +(\S*) *$/i

function readCredentials(
  params: TokenParams,
  authorization: string | undefined,
): PresentedCredentials {
  const match = authorization === undefined ? null : BASIC.exec(authorization)
  if (!match) {
    const secret = params.client_secret
    return {
      clientIds: params.client_id === undefined ? [] : [params.client_id],
      clientSecrets: secret === undefined ? undefined : [secret, secret],
      basic: false,
    }
  }
  if (params.client_secret !== undefined) {
    throw new OAuthError(
      'invalid_request',
      'use either HTTP Basic or client_secret in the body, not both',
    )
  }
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 1) return { clientIds: [], clientSecrets: undefined, basic: true, malformed: true }
  // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined. authlib and
  // requests-oauthlib send them as they are, so what does not decode, or does not match once
  // decoded, is also tried as sent.
  const rawId = decoded.slice(0, colon)
  const rawSecret = decoded.slice(colon + 1)
  const clientIds = [...new Set([formDecode(rawId) ?? rawId, rawId])]
  if (
    params.client_id !== undefined &&
    !clientIds.some((id) => id.toLowerCase() === params.client_id?.toLowerCase())
  ) {
    throw new OAuthError('invalid_request', 'client_id differs from the HTTP Basic client')
  }
  return {
    clientIds,
    clientSecrets: rawSecret === '' ? undefined : [formDecode(rawSecret) ?? rawSecret, rawSecret],
    basic: true,
  }
}

function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '))
  } catch {
    return undefined
  }
}

// The SHA-256 of each client's configured secret, computed once per Client object (a reload
// brings new ones) and again should that object's secret ever differ from the one hashed.
const digests = new WeakMap<Client, { secret: string; digest: Buffer }>()
const UNKNOWN_CLIENT_DIGEST = sha256('x')

/** The SHA-256 of a client's secret: configured in clear, or registered as its hash. */
function clientSecretDigest(client: Client): Buffer | undefined {
  if (client.clientSecret !== undefined) return secretDigest(client, client.clientSecret)
  if (client.clientSecretHash !== undefined) return Buffer.from(client.clientSecretHash, 'hex')
  return undefined
}

function secretDigest(client: Client, secret: string): Buffer {
  let cached = digests.get(client)
  if (cached?.secret !== secret) {
    cached = { secret, digest: sha256(secret) }
    digests.set(client, cached)
  }
  return cached.digest
}

/**
 * Constant-time comparison: hashing the presented secret makes it the length of the expected
 * digest, so timingSafeEqual compares without revealing where or whether lengths differ. Both
 * forms of the secret are always compared, so the time taken does not tell which one matched.
 */
function secretMatches(presented: [string, string], expectedDigest: Buffer): boolean {
  const decoded = timingSafeEqual(sha256(presented[0]), expectedDigest)
  const asSent = timingSafeEqual(sha256(presented[1]), expectedDigest)
  return decoded || asSent
}
