import { timingSafeEqual } from 'node:crypto'
import type { Client } from '@tessera/config-schema'
import { sha256 } from './crypto.js'
import { OAuthError } from './errors.js'
import type { TokenParams } from './request.js'

/** How the client proved who it is (RFC 8414 token_endpoint_auth_methods). */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none'

export interface AuthenticatedClient {
  client: Client
  method: ClientAuthMethod
}

interface PresentedCredentials {
  clientId: string | undefined
  clientSecret: string | undefined
  basic: boolean
}

/**
 * Authenticates the client of a token request by `client_secret` in the body or HTTP Basic
 * (never both), comparing secrets in constant time. Public clients present no secret.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 */
export function authenticateClient(
  params: TokenParams,
  authorization: string | undefined,
  clients: ReadonlyMap<string, Client>,
): AuthenticatedClient {
  const presented = readCredentials(params, authorization)
  const challenge = presented.basic ? ('Basic' as const) : undefined
  const fail = (description: string): OAuthError =>
    new OAuthError('invalid_client', description, { challenge })

  if (presented.clientId === undefined) {
    throw new OAuthError('invalid_request', 'client_id is required')
  }
  const client = clients.get(presented.clientId.toLowerCase())
  if (client === undefined) {
    // Spend the same work as a real comparison so response time does not reveal client ids.
    secretsMatch(presented.clientSecret ?? '', UNKNOWN_CLIENT_DIGEST)
    throw fail('client authentication failed')
  }
  if (client.clientSecret === undefined) {
    if (presented.clientSecret !== undefined) throw fail('client authentication failed')
    return { client, method: 'none' }
  }
  if (presented.clientSecret === undefined) throw fail('client authentication failed')
  if (!secretsMatch(presented.clientSecret, secretDigest(client, client.clientSecret))) {
    throw fail('client authentication failed')
  }
  return { client, method: presented.basic ? 'client_secret_basic' : 'client_secret_post' }
}

function readCredentials(
  params: TokenParams,
  authorization: string | undefined,
): PresentedCredentials {
  const match = authorization === undefined ? null : /^basic +(\S*) *$/i.exec(authorization)
  if (!match) {
    return { clientId: params.client_id, clientSecret: params.client_secret, basic: false }
  }
  if (params.client_secret !== undefined) {
    throw new OAuthError(
      'invalid_request',
      'use either HTTP Basic or client_secret in the body, not both',
    )
  }
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 1) {
    throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials', {
      challenge: 'Basic',
    })
  }
  // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
  const clientId = formDecode(decoded.slice(0, colon))
  const clientSecret = formDecode(decoded.slice(colon + 1))
  if (clientId === undefined || clientSecret === undefined) {
    throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials', {
      challenge: 'Basic',
    })
  }
  if (params.client_id !== undefined && params.client_id.toLowerCase() !== clientId.toLowerCase()) {
    throw new OAuthError('invalid_request', 'client_id differs from the HTTP Basic client')
  }
  return { clientId, clientSecret: clientSecret === '' ? undefined : clientSecret, basic: true }
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
 * digest, so timingSafeEqual compares without revealing where or whether lengths differ.
 */
function secretsMatch(presented: string, expectedDigest: Buffer): boolean {
  return timingSafeEqual(sha256(presented), expectedDigest)
}
