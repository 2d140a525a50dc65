import type { Client } from '@tessera/config-schema'
import type { TokenSigner } from '@tessera/keys'
import { beforeEach, describe, expect, it } from 'vitest'
import { parseAuthorizationRequest } from './authorize.js'
import { clientCredentialsGrant } from './client-credentials.js'
import type { GrantDeps, TenantContext } from './context.js'
import { OAuthError } from './errors.js'
import { parseTokenRequestBody } from './request.js'
import { findResource, scopesForResource, tokenResource } from './resource.js'

const MCP = 'https://mcp.acme.test/mcp'
const BILLING = 'urn:acme:billing'

const service: Client = {
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  clientSecret: 'service-secret',
  grantTypes: ['client_credentials', 'authorization_code'],
  redirectUris: ['https://app.acme.test/cb'],
  postLogoutRedirectUris: [],
  scopes: ['tools:read', 'tools:call', 'orders:read'],
  introspection: 'own',
}

let signed: Record<string, unknown>[]
const signer: TokenSigner = {
  alg: 'HS256',
  sign: (claims) => {
    signed.push(claims)
    return Promise.resolve({ token: `token-${signed.length}` })
  },
}
const tenant: TenantContext = {
  name: 'acme',
  issuer: 'https://acme.test',
  audience: 'https://api.acme.test',
  clients: new Map([[service.clientId, service]]),
  resources: [{ uri: MCP, scopes: ['tools:read', 'tools:call'] }, { uri: BILLING }],
  signer,
  users: { authenticate: () => Promise.reject(new Error('no user is asked')) },
  verifyAccessToken: () => Promise.resolve(undefined),
  accessTokenTtlSeconds: 900,
}
const deps = { clock: () => 1_700_000_000_000, randomId: () => 'id' } as unknown as GrantDeps

beforeEach(() => {
  signed = []
})

function errorOf(run: () => unknown): OAuthError {
  try {
    run()
  } catch (error) {
    if (error instanceof OAuthError) return error
    throw error
  }
  throw new Error('expected an OAuthError')
}

async function rejection(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof OAuthError) return error
    throw error
  }
  throw new Error('expected an OAuthError')
}

describe('findResource', () => {
  it('matches after lower-casing scheme and host and dropping a default port', () => {
    expect(findResource(tenant, 'HTTPS://MCP.ACME.TEST:443/mcp').uri).toBe(MCP)
    expect(findResource(tenant, BILLING).uri).toBe(BILLING)
  })

  it('refuses anything else with invalid_target: another path, case, port or a fragment', () => {
    for (const uri of [`${MCP}/`, 'https://mcp.acme.test/MCP', 'https://mcp.acme.test:8443/mcp']) {
      expect(errorOf(() => findResource(tenant, uri)).code).toBe('invalid_target')
    }
    expect(errorOf(() => findResource(tenant, `${MCP}#x`)).code).toBe('invalid_target')
    expect(errorOf(() => findResource({ ...tenant, resources: undefined }, MCP)).code).toBe(
      'invalid_target',
    )
  })
})

describe('tokenResource', () => {
  it('takes the one named, which a sign-in must have named too', () => {
    expect(tokenResource(tenant, MCP)?.uri).toBe(MCP)
    expect(tokenResource(tenant, MCP, [MCP, BILLING])?.uri).toBe(MCP)
    expect(errorOf(() => tokenResource(tenant, MCP, [BILLING])).code).toBe('invalid_target')
    expect(errorOf(() => tokenResource(tenant, MCP, [])).code).toBe('invalid_target')
  })

  it("without one, takes the sign-in's only resource, else none", () => {
    expect(tokenResource(tenant, undefined, [BILLING])?.uri).toBe(BILLING)
    expect(tokenResource(tenant, undefined, [MCP, BILLING])).toBeUndefined()
    expect(tokenResource(tenant, undefined)).toBeUndefined()
  })
})

describe('scopesForResource', () => {
  it("narrows silently to the resource's scopes, and refuses an empty result", () => {
    expect(scopesForResource(['tools:read', 'orders:read'], tenant.resources?.[0])).toEqual([
      'tools:read',
    ])
    expect(scopesForResource(['orders:read'], tenant.resources?.[1])).toEqual(['orders:read'])
    expect(scopesForResource(['orders:read'], undefined)).toEqual(['orders:read'])
    expect(errorOf(() => scopesForResource(['orders:read'], tenant.resources?.[0])).code).toBe(
      'invalid_scope',
    )
  })
})

describe('resource at /token', () => {
  it('refuses a repeated resource with invalid_target, and parses one', () => {
    const error = errorOf(() =>
      parseTokenRequestBody(
        `resource=${encodeURIComponent(MCP)}&resource=${encodeURIComponent(BILLING)}`,
        'application/x-www-form-urlencoded',
      ),
    )
    expect(error.code).toBe('invalid_target')
    expect(
      parseTokenRequestBody(`resource=${BILLING}`, 'application/x-www-form-urlencoded'),
    ).toEqual({ resource: BILLING })
  })

  it('gives the token the resource as aud, spelled as configured, and narrows its scope', async () => {
    const authenticated = { client: service, method: 'client_secret_post' as const }
    const response = await clientCredentialsGrant(
      { resource: 'https://MCP.acme.test:443/mcp' },
      authenticated,
      tenant,
      deps,
    )
    expect(response.scope).toBe('tools:read tools:call')
    expect(signed[0]).toMatchObject({ aud: MCP, scope: 'tools:read tools:call' })
    await clientCredentialsGrant({}, authenticated, tenant, deps)
    expect(signed[1]).toMatchObject({ aud: tenant.audience })
    const empty = await rejection(
      clientCredentialsGrant({ resource: MCP, scope: 'orders:read' }, authenticated, tenant, deps),
    )
    expect(empty.code).toBe('invalid_scope')
    const unknown = await rejection(
      clientCredentialsGrant({ resource: 'https://other.test' }, authenticated, tenant, deps),
    )
    expect(unknown.code).toBe('invalid_target')
  })
})

describe('resource at /authorize', () => {
  const query = (resources: string[]) => [
    ['client_id', service.clientId] as [string, string],
    ['redirect_uri', 'https://app.acme.test/cb'] as [string, string],
    ['response_type', 'code'] as [string, string],
    ['state', 's'] as [string, string],
    ...resources.map((uri) => ['resource', uri] as [string, string]),
  ]

  it('keeps every resource named, as configured, once each', async () => {
    const outcome = await parseAuthorizationRequest(
      query([MCP, 'HTTPS://mcp.acme.test/mcp', BILLING]),
      tenant,
    )
    expect(outcome).toMatchObject({ kind: 'login', request: { resources: [MCP, BILLING] } })
    const none = await parseAuthorizationRequest(query([]), tenant)
    expect(none.kind === 'login' && none.request).not.toHaveProperty('resources')
  })

  it('sends an unknown resource back as an invalid_target redirect', async () => {
    const outcome = await parseAuthorizationRequest(query([MCP, 'https://other.test/']), tenant)
    expect(outcome.kind).toBe('redirect')
    const location = new URL(outcome.kind === 'redirect' ? outcome.location : '')
    expect(location.searchParams.get('error')).toBe('invalid_target')
    expect(location.searchParams.get('state')).toBe('s')
  })
})
