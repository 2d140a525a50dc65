import type { Client } from '@tessera/config-schema'
import type { JWTPayload, TokenSigner } from '@tessera/keys'
import { beforeEach, describe, expect, it } from 'vitest'
import { issueAccessToken } from './access-token.js'
import type { GrantDeps, TenantContext } from './context.js'
import { sha256Hex } from './crypto.js'
import { OAuthError } from './errors.js'
import { introspectToken } from './introspection.js'
import type { MarkStore, RefreshFamily, RefreshTokenStore } from './ports.js'
import { revokeToken } from './revocation.js'

// Unit test of the decisions, with in-test ports; the issuer's e2e tests run both endpoints
// over HTTP against the real stores and signers.
const now = 1_700_000_000_000
const exp = now / 1000 + 3600

function client(clientId: string, fields: Partial<Client> = {}): Client {
  return {
    clientId,
    clientSecret: 'secret',
    grantTypes: ['authorization_code', 'refresh_token'],
    redirectUris: ['https://app.test/cb'],
    postLogoutRedirectUris: [],
    scopes: ['a'],
    introspection: 'own',
    ...fields,
  }
}
const web = client('web')
const other = client('other')
const resourceServer = client('api', { introspection: 'tenant' })
const publicClient = client('spa', { clientSecret: undefined })

const family: RefreshFamily = {
  familyId: 'fam',
  tenant: 'acme',
  clientId: 'web',
  sub: 'alice',
  scope: 'a',
  claims: {},
  createdAt: now,
  expiresAt: now + 86_400_000,
}

/** Access tokens are their payloads' names here: the verifier answers from this table. */
const payloads: Record<string, JWTPayload> = {
  'at.web': { iss: 'https://acme.test', sub: 'alice', client_id: 'web', jti: 'plain', exp },
  'at.family': { iss: 'https://acme.test', sub: 'alice', client_id: 'web', jti: 'fam.x', exp },
  'at.gone': { iss: 'https://acme.test', sub: 'alice', client_id: 'web', jti: 'gone.x', exp },
  // A client_credentials token: sub is the client, the jti names no family.
  'at.service': { iss: 'https://acme.test', sub: 'other', client_id: 'other', jti: 'svc', exp },
  // Forged jtis (only a holder of an HS256 secret could sign them) naming web's live family.
  'at.borrowed': { iss: 'https://acme.test', sub: 'other', client_id: 'other', jti: 'fam.y', exp },
  'at.othersub': { iss: 'https://acme.test', sub: 'mallory', client_id: 'web', jti: 'fam.z', exp },
  'at.nojti': { iss: 'https://acme.test', sub: 'alice', client_id: 'web', exp },
  'at.longjti': { iss: 'https://acme.test', client_id: 'web', jti: 'x'.repeat(600), exp },
  'at.oddjti': { iss: 'https://acme.test', client_id: 'web', jti: 'a.b.c\ud800', exp },
  'at.hugeexp': { iss: 'https://acme.test', client_id: 'web', jti: 'huge', exp: 1e300 },
  'at.fracexp': { iss: 'https://acme.test', client_id: 'web', jti: 'frac', exp: exp + 0.5 },
}

let calls: string[]
let marks: Map<string, number>
let families: Map<string, RefreshFamily>

const refreshTokens = {
  findRefreshToken(_tenant: string, tokenHash: string) {
    calls.push('findRefreshToken')
    const f = families.get('fam')
    return Promise.resolve(
      tokenHash === sha256Hex('rt') && f !== undefined
        ? { token: { tokenHash, familyId: 'fam', createdAt: now }, family: { ...f } }
        : undefined,
    )
  },
  findFamily(_tenant: string, familyId: string) {
    calls.push('findFamily')
    const f = families.get(familyId)
    return Promise.resolve(f === undefined ? undefined : { ...f })
  },
  revokeFamily(_tenant: string, familyId: string, at: number) {
    calls.push('revokeFamily')
    const f = families.get(familyId)
    if (f !== undefined) f.revokedAt ??= at
    return Promise.resolve()
  },
} as unknown as RefreshTokenStore

const markStore: MarkStore = {
  mark(tenant, kind, id, expiresAt) {
    calls.push('mark')
    const key = `${tenant}/${kind}/${id}`
    const fresh = !marks.has(key)
    marks.set(key, expiresAt)
    return Promise.resolve(fresh)
  },
  isMarked(tenant, kind, id, at) {
    calls.push('isMarked')
    return Promise.resolve((marks.get(`${tenant}/${kind}/${id}`) ?? 0) > at)
  },
}

const tenant = {
  name: 'acme',
  issuer: 'https://acme.test',
  verifyAccessToken: (token: string) => {
    calls.push('verifyAccessToken')
    return Promise.resolve(payloads[token])
  },
} as unknown as TenantContext

const deps = { refreshTokens, marks: markStore, clock: () => now } as unknown as GrantDeps

beforeEach(() => {
  calls = []
  marks = new Map()
  families = new Map([['fam', { ...family }]])
})

function introspect(token: string, as: Client, hint?: string) {
  return introspectToken(
    hint === undefined ? { token } : { token, token_type_hint: hint },
    as,
    tenant,
    deps,
  )
}

describe('introspectToken', () => {
  it('answers bearer for access tokens and refresh_token for refresh tokens', async () => {
    expect(await introspect('at.web', web)).toMatchObject({
      active: true,
      token_type: 'bearer',
      client_id: 'web',
      jti: 'plain',
    })
    expect(await introspect('rt', web)).toMatchObject({
      active: true,
      token_type: 'refresh_token',
      client_id: 'web',
    })
  })

  it('shows a client its own tokens only, a tenant-wide client all, a public client none', async () => {
    expect(await introspect('at.web', other)).toEqual({ active: false })
    expect(await introspect('rt', other)).toEqual({ active: false })
    expect(await introspect('at.web', resourceServer)).toMatchObject({ active: true })
    expect(await introspect('rt', resourceServer)).toMatchObject({ active: true })
    await expect(introspect('at.web', publicClient)).rejects.toMatchObject({
      code: 'invalid_client',
    })
    await expect(
      introspect('at.web', client('x', { introspection: 'tenant', clientSecret: undefined })),
    ).rejects.toBeInstanceOf(OAuthError)
  })

  it('orders the search by the hint, and still finds a token of the other type', async () => {
    expect(await introspect('rt', web, 'access_token')).toMatchObject({ active: true })
    expect(calls).toEqual(['verifyAccessToken', 'findRefreshToken'])
    calls = []
    expect(await introspect('at.web', web, 'refresh_token')).toMatchObject({ active: true })
    expect(calls.slice(0, 2)).toEqual(['findRefreshToken', 'verifyAccessToken'])
    expect(await introspect('nonsense', web, 'unknown_hint')).toEqual({ active: false })
  })

  it('reports an access token inactive once its family is revoked or gone', async () => {
    expect(await introspect('at.family', web)).toMatchObject({ active: true })
    families.get('fam')!.revokedAt = now - 1
    expect(await introspect('at.family', web)).toEqual({ active: false })
    expect(await introspect('at.gone', web)).toEqual({ active: false })
  })

  it('keeps a family-less (client_credentials) token active until revoked itself', async () => {
    expect(await introspect('at.service', other)).toMatchObject({
      active: true,
      sub: 'other',
      client_id: 'other',
    })
    // No family is looked up for it, and revoking every family changes nothing for it.
    expect(calls).not.toContain('findFamily')
    families.get('fam')!.revokedAt = now - 1
    expect(await introspect('at.service', other)).toMatchObject({ active: true })
    await revokeToken({ token: 'at.service' }, web, tenant, deps)
    expect(await introspect('at.service', other)).toMatchObject({ active: true })
    await revokeToken({ token: 'at.service' }, other, tenant, deps)
    expect([...marks]).toEqual([['acme/access_token_revoked/svc', exp * 1000]])
    expect(await introspect('at.service', other)).toEqual({ active: false })
  })

  it('never lets a jti borrow the live family of another client or subject', async () => {
    expect(await introspect('at.family', web)).toMatchObject({ active: true })
    expect(await introspect('at.borrowed', other)).toEqual({ active: false })
    expect(await introspect('at.borrowed', resourceServer)).toEqual({ active: false })
    expect(await introspect('at.othersub', web)).toEqual({ active: false })
    // Revoking the forged token marks its own jti only; web's sign-in stays live.
    await revokeToken({ token: 'at.borrowed' }, other, tenant, deps)
    expect(families.get('fam')).not.toHaveProperty('revokedAt')
    expect(await introspect('at.family', web)).toMatchObject({ active: true })
  })

  it('reports an access token without a jti or exp of its making inactive, asking no store', async () => {
    for (const token of ['at.nojti', 'at.longjti', 'at.oddjti', 'at.hugeexp', 'at.fracexp']) {
      expect(await introspect(token, web, 'access_token')).toEqual({ active: false })
      await revokeToken({ token, token_type_hint: 'access_token' }, web, tenant, deps)
    }
    expect(calls.filter((call) => call !== 'verifyAccessToken')).toEqual([])
  })
})

describe('revokeToken', () => {
  it('records an access token of the client as revoked until its exp', async () => {
    await revokeToken({ token: 'at.web' }, web, tenant, deps)
    expect([...marks]).toEqual([['acme/access_token_revoked/plain', exp * 1000]])
    expect(await introspect('at.web', web)).toEqual({ active: false })
    // Its family, and so the other tokens of the sign-in, are untouched.
    await revokeToken({ token: 'at.family', token_type_hint: 'access_token' }, web, tenant, deps)
    expect(families.get('fam')).not.toHaveProperty('revokedAt')
    expect(await introspect('at.family', web)).toEqual({ active: false })
    expect(await introspect('rt', web)).toMatchObject({ active: true })
  })

  it('changes nothing for a token of another client, or one that does not verify', async () => {
    await revokeToken({ token: 'at.web' }, other, tenant, deps)
    await revokeToken({ token: 'at.web' }, resourceServer, tenant, deps)
    await revokeToken({ token: 'rt' }, other, tenant, deps)
    await revokeToken({ token: 'not.a.token' }, web, tenant, deps)
    expect(marks.size).toBe(0)
    expect(calls).not.toContain('revokeFamily')
    expect(await introspect('at.web', web)).toMatchObject({ active: true })
  })

  it('revokes the family of a refresh token, whatever the hint', async () => {
    await revokeToken({ token: 'rt', token_type_hint: 'access_token' }, web, tenant, deps)
    expect(families.get('fam')?.revokedAt).toBe(now)
    expect(await introspect('at.family', web)).toEqual({ active: false })
  })
})

describe('issueAccessToken with a family', () => {
  it('names the family in the jti and never outlives the family', async () => {
    const signed: Record<string, unknown>[] = []
    const signer: TokenSigner = {
      alg: 'HS256',
      sign: (claims) => {
        signed.push(claims)
        return Promise.resolve({ token: 't' })
      },
    }
    const context: TenantContext = { ...tenant, signer, accessTokenTtlSeconds: 7200 }
    const ids = { clock: () => now, randomId: () => 'r' }
    const input = { sub: 'alice', clientId: 'web', scopes: ['a'] }
    const long = await issueAccessToken({ ...input, family }, context, ids)
    expect(long).toEqual({ token: 't', expiresIn: 7200, jti: 'fam.r' })
    const ending = { familyId: 'fam', expiresAt: now + 600_000 }
    expect(await issueAccessToken({ ...input, family: ending }, context, ids)).toMatchObject({
      expiresIn: 600,
    })
    expect(signed[1]).toMatchObject({ jti: 'fam.r', exp: now / 1000 + 600 })
    expect(await issueAccessToken(input, context, ids)).toMatchObject({ jti: 'r', expiresIn: 7200 })
  })
})
