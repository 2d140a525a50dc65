import { createHash, timingSafeEqual } from 'node:crypto'
import type { Client } from '@tessera/config-schema'
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
    secretsMatch(presented.clientSecret ?? '', 'x')
    throw fail('client authentication failed')
  }
  if (client.clientSecret === undefined) {
    if (presented.clientSecret !== undefined) throw fail('client authentication failed')
    return { client, method: 'none' }
  }
  if (presented.clientSecret === undefined) throw fail('client authentication failed')
  if (!secretsMatch(presented.clientSecret, client.clientSecret)) {
    throw fail('client authentication failed')
  }
  return { client, method: presented.basic ? 'client_secret_basic' : 'client_secret_post' }
}

function readCredentials(
  params: TokenParams,
  authorization: string | undefined,
): PresentedCredentials {
  const match = /^basic +(\S*) *$/i.exec(authorization ?? '')
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

/** Constant-time comparison: hashing first makes both inputs the same length. */
function secretsMatch(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}
