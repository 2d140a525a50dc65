import type { Client } from '@tessera/config-schema'
import type { TokenSigner } from '@tessera/keys'
import { beforeEach, describe, expect, it } from 'vitest'
import type { GrantDeps, TenantContext } from './context.js'
import { sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import type { RefreshFamily, RefreshTokenRecord, RefreshTokenStore, RotateResult } from './ports.js'
import { refreshTokenGrant } from './refresh-token.js'
import type { TokenParams } from './request.js'

// Unit test of the grant's use of the port, with an in-test store that follows the port's
// rotation rules; the store's contract suite holds the real adapters to those rules, and the
// issuer's e2e tests run the grant over HTTP against them.
const now = 1_700_000_000_000
const client: Client = {
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  clientSecret: 'secret',
  grantTypes: ['refresh_token'],
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: ['a', 'b'],
  introspection: 'own',
}
const otherClient: Client = { ...client, clientId: '11111111-2222-4333-8444-555555555555' }
const signer: TokenSigner = {
  alg: 'HS256',
  sign: (claims) => Promise.resolve({ token: `token-for-${String(claims.scope)}` }),
}
const tenant = {
  name: 'acme',
  issuer: 'https://acme.test',
  audience: 'https://api.acme.test',
  signer,
  accessTokenTtlSeconds: 7200,
} as TenantContext

interface FakeStore extends RefreshTokenStore {
  calls: string[]
  tokens: Map<string, RefreshTokenRecord>
  family: RefreshFamily
}

function fakeStore(): FakeStore {
  const family: RefreshFamily = {
    familyId: 'family-1',
    tenant: 'acme',
    clientId: client.clientId,
    sub: 'alice',
    scope: 'a b',
    claims: { role: 'x' },
    createdAt: now,
    expiresAt: now + 3_600_000,
  }
  const tokens = new Map<string, RefreshTokenRecord>([
    [sha256Hex('rt-1'), { tokenHash: sha256Hex('rt-1'), familyId: 'family-1', createdAt: now }],
  ])
  const calls: string[] = []
  const rotate = (oldHash: string, newHash: string, at: number): RotateResult => {
    const token = tokens.get(oldHash)
    if (token === undefined) return { status: 'not_found' }
    if (token.spentAt !== undefined) {
      family.revokedAt ??= at
      return { status: 'reused', family: { ...family } }
    }
    if (family.revokedAt !== undefined) return { status: 'inactive', family: { ...family } }
    token.spentAt = at
    tokens.set(newHash, { tokenHash: newHash, familyId: family.familyId, createdAt: at })
    return { status: 'rotated', family: { ...family } }
  }
  const store: FakeStore = {
    calls,
    tokens,
    family,
    findRefreshToken(tenantName, tokenHash) {
      calls.push('findRefreshToken')
      const token = tokens.get(tokenHash)
      return Promise.resolve(
        tenantName === 'acme' && token ? { token: { ...token }, family: { ...family } } : undefined,
      )
    },
    rotateRefreshToken(_tenant, oldHash, newHash, at) {
      calls.push('rotateRefreshToken')
      return Promise.resolve(rotate(oldHash, newHash, at))
    },
    rotateRefreshTokenForClient(_tenant, clientId, oldHash, newHash, at) {
      calls.push('rotateRefreshTokenForClient')
      if (tokens.has(oldHash) && clientId !== family.clientId) {
        return Promise.resolve({ status: 'not_found' })
      }
      return Promise.resolve(rotate(oldHash, newHash, at))
    },
    findFamily: () => Promise.reject(new Error('not used')),
    revokeFamily: () => Promise.reject(new Error('not used')),
    revokeFamiliesByCode: () => Promise.reject(new Error('not used')),
  }
  return store
}

function deps(store: RefreshTokenStore): GrantDeps {
  return { refreshTokens: store, clock: () => now, randomId: () => 'jti-1' } as GrantDeps
}

async function refuse(promise: Promise<unknown>): Promise<OAuthError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(OAuthError)
  return error as OAuthError
}

// Without a scope the grant rotates in one call, the store checking the client; a scope asked for
// (even the family's whole scope) makes it read the family first, then rotate.
const shapes: { label: string; asked: TokenParams; calls: string[] }[] = [
  { label: 'without a scope', asked: {}, calls: ['rotateRefreshTokenForClient'] },
  {
    label: 'asking for the family’s whole scope',
    asked: { scope: 'a b' },
    calls: ['findRefreshToken', 'rotateRefreshToken'],
  },
]

for (const { label, asked, calls } of shapes) {
  describe(`refreshTokenGrant, ${label}`, () => {
    let store: FakeStore
    beforeEach(() => {
      store = fakeStore()
    })

    it('rotates the token and answers with the family’s whole scope', async () => {
      const response = await refreshTokenGrant(
        { refresh_token: 'rt-1', ...asked },
        client,
        tenant,
        deps(store),
      )
      expect(response).toMatchObject({ access_token: 'token-for-a b', scope: 'a b' })
      expect(store.tokens.get(sha256Hex(response.refresh_token ?? ''))).toMatchObject({
        familyId: 'family-1',
      })
      expect(store.calls).toEqual(calls)
    })

    it('refuses a token of another client and leaves it unspent', async () => {
      const error = await refuse(
        refreshTokenGrant({ refresh_token: 'rt-1', ...asked }, otherClient, tenant, deps(store)),
      )
      expect(error).toMatchObject({ code: 'invalid_grant', description: 'invalid refresh token' })
      expect(store.tokens.get(sha256Hex('rt-1'))).not.toHaveProperty('spentAt')
      expect(store.family).not.toHaveProperty('revokedAt')
    })

    it('refuses an unknown token as invalid', async () => {
      const error = await refuse(
        refreshTokenGrant({ refresh_token: 'made-up', ...asked }, client, tenant, deps(store)),
      )
      expect(error).toMatchObject({ code: 'invalid_grant', description: 'invalid refresh token' })
    })

    it('revokes the sign-in when a spent token comes back', async () => {
      await refreshTokenGrant({ refresh_token: 'rt-1', ...asked }, client, tenant, deps(store))
      const error = await refuse(
        refreshTokenGrant({ refresh_token: 'rt-1', ...asked }, client, tenant, deps(store)),
      )
      expect(error.description).toBe('refresh token already used; the sign-in is revoked')
      expect(store.family.revokedAt).toBe(now)
    })
  })
}

describe('refreshTokenGrant, narrowing the scope', () => {
  let store: FakeStore
  beforeEach(() => {
    store = fakeStore()
  })

  it('narrows the access token to a scope asked for, reading the family first', async () => {
    const response = await refreshTokenGrant(
      { refresh_token: 'rt-1', scope: 'b' },
      client,
      tenant,
      deps(store),
    )
    expect(response).toMatchObject({ access_token: 'token-for-b', scope: 'b' })
    expect(store.calls).toEqual(['findRefreshToken', 'rotateRefreshToken'])
  })

  it('refuses a scope the family lacks before spending the token', async () => {
    const error = await refuse(
      refreshTokenGrant({ refresh_token: 'rt-1', scope: 'c' }, client, tenant, deps(store)),
    )
    expect(error.code).toBe('invalid_scope')
    expect(store.calls).toEqual(['findRefreshToken'])
    expect(store.tokens.get(sha256Hex('rt-1'))).not.toHaveProperty('spentAt')
  })
})

describe('refreshTokenGrant with DPoP', () => {
  const JKT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'
  let store: FakeStore
  beforeEach(() => {
    store = fakeStore()
    store.family.dpopJkt = JKT
  })

  it('rotates the bound token of a public client with a proof of its key: a DPoP token', async () => {
    const response = await refreshTokenGrant(
      { refresh_token: 'rt-1' },
      client,
      tenant,
      deps(store),
      {
        jkt: JKT,
        publicClient: true,
      },
    )
    expect(response.token_type).toBe('DPoP')
    // A public client's family is read before the rotation, so its key is checked first.
    expect(store.calls).toEqual(['findRefreshToken', 'rotateRefreshToken'])
  })

  it.each([
    ['another key', { jkt: 'x'.repeat(43), publicClient: true }, 'invalid_grant'],
    ['no proof', { publicClient: true }, 'invalid_dpop_proof'],
  ])('refuses %s before spending the token', async (_, binding, code) => {
    const error = await refuse(
      refreshTokenGrant({ refresh_token: 'rt-1' }, client, tenant, deps(store), binding),
    )
    expect(error.code).toBe(code)
    expect(store.calls).toEqual(['findRefreshToken'])
    expect(store.tokens.get(sha256Hex('rt-1'))).not.toHaveProperty('spentAt')
    expect(store.family).not.toHaveProperty('revokedAt')
  })

  it('binds the access token of a confidential client without reading the family first', async () => {
    delete store.family.dpopJkt
    const response = await refreshTokenGrant(
      { refresh_token: 'rt-1' },
      client,
      tenant,
      deps(store),
      {
        jkt: JKT,
        publicClient: false,
      },
    )
    expect(response.token_type).toBe('DPoP')
    expect(store.calls).toEqual(['rotateRefreshTokenForClient'])
  })
})
