import { assertion, ASSERTION_TYPE, writeConfig } from './client-assertion.js'
import type { ClientKey } from './client-assertion.js'
import { basicAuth, postForm, send } from './http.js'
import type { HttpResponse } from './http.js'

/** The tenant of the client-authentication throttle tests. */
export const CA = {
  host: 'ca.test',
  issuer: 'http://ca.test',
  client: 'cacacaca-0000-4000-8000-000000000001',
  secret: 'ca-client-secret-0123',
  keyClient: 'cacacaca-0000-4000-8000-000000000002',
}

/** A configuration directory with CA's tenant: a secret client and a private_key_jwt client. */
export function writeClientAuthConfig(dir: string, key: ClientKey): string {
  return writeConfig(
    dir,
    `name: ca
config:
  hosts: [${CA.host}]
  providers: [providers/users.mjs]
  clients:
    - client_id: ${CA.client}
      client_secret: ${CA.secret}
      grant_types: [client_credentials]
      scopes: [read]
    - client_id: ${CA.keyClient}
      token_endpoint_auth_method: private_key_jwt
      jwks: ${JSON.stringify({ keys: [key.jwk] })}
      grant_types: [client_credentials]
      scopes: [read]
`,
  )
}

export type Endpoint = 'token' | 'revoke' | 'introspect'

/**
 * A request to `endpoint` from `address` (X-Forwarded-For, with TRUST_PROXY=1) authenticated by
 * HTTP Basic with `clientId` and `secret`.
 */
export function withSecret(
  url: string,
  endpoint: Endpoint,
  clientId: string,
  secret: string,
  address: string,
): Promise<HttpResponse> {
  const form: Record<string, string> =
    endpoint === 'token' ? { grant_type: 'client_credentials' } : { token: 'not-a-token' }
  return send(url, {
    method: 'POST',
    path: `/${endpoint}`,
    host: CA.host,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basicAuth(clientId, secret),
      'x-forwarded-for': address,
    },
    body: new URLSearchParams(form).toString(),
  })
}

/**
 * A client_credentials request from `address` with an assertion of the key client by `key`,
 * issued at `now` (epoch milliseconds: the issuer's clock).
 */
export async function withAssertion(
  url: string,
  key: ClientKey,
  address: string,
  now: number,
): Promise<HttpResponse> {
  const iat = Math.floor(now / 1000)
  return postForm(
    url,
    CA.host,
    {
      grant_type: 'client_credentials',
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await assertion(key, CA.keyClient, `${CA.issuer}/token`, {
        iat,
        exp: iat + 60,
      }),
    },
    { 'x-forwarded-for': address },
  )
}

/** How many of `responses` had each status: `{ 401: 20, 429: 40 }`. */
export function statuses(responses: readonly HttpResponse[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1
  return counts
}
