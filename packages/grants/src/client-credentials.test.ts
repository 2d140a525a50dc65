import type { Client } from '@tessera/config-schema'
import type { TokenSigner } from '@tessera/keys'
import { beforeEach, describe, expect, it } from 'vitest'
import type { AuthenticatedClient } from './client-auth.js'
import { clientCredentialsGrant } from './client-credentials.js'
import type { GrantDeps, TenantContext } from './context.js'
import { OAuthError } from './errors.js'
import { handleTokenRequest } from './token-endpoint.js'
import { memoryFailureCounter, testClientAuthPolicy } from './test-utils/memory-failure-counter.js'

// Unit test of the grant's decisions with an in-test signer; the issuer's e2e tests run it over
// HTTP against the SQLite store and real signing.

const service: Client = {
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  name: 'Billing service',
  clientSecret: 'service-secret',
  grantTypes: ['client_credentials'],
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: ['orders:read', 'orders:write'],
  introspection: 'own',
}
const web: Client = { ...service, clientId: 'a1b2c3d4-0000-4000-8000-000000000001' }
web.grantTypes = ['authorization_code', 'refresh_token', 'password']
const spa: Client = {
  ...service,
  clientId: 'a1b2c3d4-0000-4000-8000-000000000002',
  clientSecret: undefined,
}

let signed: Record<string, unknown>[]
const signer: TokenSigner = {
  alg: 'HS256',
  sign: (claims) => {
    signed.push(claims)
    return Promise.resolve({ token: `token-${signed.length}` })
  },
}
// The grant asks no user: any call to the authenticator fails the test.
const tenant: TenantContext = {
  name: 'acme',
  issuer: 'https://acme.test',
  audience: 'https://api.acme.test',
  clients: new Map([service, web, spa].map((client) => [client.clientId, client])),
  signer,
  users: {
    authenticate: () => {
      throw new Error('the client_credentials grant asked a provider')
    },
  },
  verifyAccessToken: () => Promise.resolve(undefined),
  accessTokenTtlSeconds: 900,
}

// Nor does it touch any store: no code, no refresh family, no throttle, no mark.
const untouched = new Proxy(
  {},
  {
    get(_target, name) {
      throw new Error(`the client_credentials grant used ${String(name)}`)
    },
  },
) as never
let ids: number
const deps: GrantDeps = {
  throttle: untouched,
  throttlePolicy: {
    maxFailuresPerUser: 3,
    maxFailuresPerAddress: 10,
    windowMs: 60_000,
    waitMs: 1_000,
    leaseMs: 11_000,
  },
  clientAuthFailures: memoryFailureCounter(),
  clientAuthPolicy: testClientAuthPolicy,
  codes: untouched,
  refreshTokens: untouched,
  marks: untouched,
  secrets: untouched,
  sessions: untouched,
  clientKeys: untouched,
  codeTtlSeconds: 60,
  refreshTokenTtlSeconds: 3600,
  consents: {} as GrantDeps['consents'],
  loginTtlSeconds: 600,
  sessionTtlSeconds: 3600,
  clock: () => 1_700_000_000_000,
  randomId: () => `id-${++ids}`,
}

beforeEach(() => {
  signed = []
  ids = 0
})

const confidential: AuthenticatedClient = { client: service, method: 'client_secret_post' }

async function errorOf(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof OAuthError) return error
    throw error
  }
  throw new Error('expected an OAuthError')
}

describe('clientCredentialsGrant', () => {
  it('issues a token about the client itself, with every scope of the client', async () => {
    const response = await clientCredentialsGrant({}, confidential, tenant, deps)
    expect(response).toEqual({
      access_token: 'token-1',
      token_type: 'bearer',
      expires_in: 900,
      scope: 'orders:read orders:write',
    })
    expect(signed).toEqual([
      {
        iss: 'https://acme.test',
        sub: service.clientId,
        aud: 'https://api.acme.test',
        iat: 1_700_000_000,
        exp: 1_700_000_900,
        jti: 'id-1',
        client_id: service.clientId,
        scope: 'orders:read orders:write',
      },
    ])
  })

  it('narrows the scope to the one asked for, and refuses one outside the client', async () => {
    const narrowed = await clientCredentialsGrant(
      { scope: 'orders:read' },
      { client: service, method: 'client_secret_basic' },
      tenant,
      deps,
    )
    expect(narrowed.scope).toBe('orders:read')
    expect(signed[0]).toMatchObject({ scope: 'orders:read' })
    const wider = await errorOf(
      clientCredentialsGrant({ scope: 'orders:read admin' }, confidential, tenant, deps),
    )
    expect(wider).toMatchObject({ code: 'invalid_scope' })
    expect(wider.description).toContain('admin')
    expect(signed).toHaveLength(1)
  })

  it('refuses a client that authenticated with no credential, whatever its settings say', async () => {
    const asPublic = { client: service, method: 'none' } as const
    expect(await errorOf(clientCredentialsGrant({}, asPublic, tenant, deps))).toMatchObject({
      code: 'unauthorized_client',
      description: 'the client_credentials grant needs a confidential client',
    })
    expect(signed).toEqual([])
  })

  it('refuses a confidential client that does not list the grant', async () => {
    const error = await errorOf(
      clientCredentialsGrant({}, { client: web, method: 'client_secret_post' }, tenant, deps),
    )
    expect(error).toMatchObject({
      code: 'unauthorized_client',
      description: 'the client_credentials grant is not enabled for this client',
    })
  })

  it.each(['username', 'password', 'refresh_token', 'code', 'code_verifier', 'redirect_uri'])(
    'refuses %s sent along, issuing nothing',
    async (name) => {
      const error = await errorOf(
        clientCredentialsGrant({ [name]: 'x', scope: 'orders:read' }, confidential, tenant, deps),
      )
      expect(error).toMatchObject({
        code: 'invalid_request',
        description: `${name} is not a parameter of the client_credentials grant`,
      })
      expect(signed).toEqual([])
    },
  )

  it('ignores parameters no grant knows (RFC 6749 §3.2)', async () => {
    const response = await clientCredentialsGrant(
      { audience: 'https://elsewhere.test', nonce: 'n' },
      confidential,
      tenant,
      deps,
    )
    expect(response.access_token).toBe('token-1')
  })
})

describe('handleTokenRequest with grant_type=client_credentials', () => {
  const request = (params: Record<string, string>, authorization?: string) =>
    handleTokenRequest(
      { params: { grant_type: 'client_credentials', ...params }, authorization, address: '::1' },
      tenant,
      deps,
    )

  it('authenticates the client by its secret, in the body or by HTTP Basic', async () => {
    const body = await request({ client_id: service.clientId, client_secret: 'service-secret' })
    expect(body).not.toHaveProperty('refresh_token')
    const basic = `Basic ${Buffer.from(`${service.clientId}:service-secret`).toString('base64')}`
    expect((await request({}, basic)).access_token).toBe('token-2')
    expect(signed.map((claims) => claims.sub)).toEqual([service.clientId, service.clientId])
  })

  it('answers invalid_client for a wrong or missing secret, unauthorized_client for a public one', async () => {
    const wrong = await errorOf(request({ client_id: service.clientId, client_secret: 'nope' }))
    expect(wrong).toMatchObject({ code: 'invalid_client' })
    const missing = await errorOf(request({ client_id: service.clientId }))
    expect(missing).toMatchObject({ code: 'invalid_client' })
    expect(await errorOf(request({ client_id: spa.clientId }))).toMatchObject({
      code: 'unauthorized_client',
    })
    expect(signed).toEqual([])
  })
})
