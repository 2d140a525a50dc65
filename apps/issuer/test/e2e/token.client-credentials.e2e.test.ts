import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { basicAuth, postForm, postJson, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { JWT_SECRET, useIssuer } from '../support/issuer.js'

// The client_credentials grant over HTTP, against the SQLite store and real signing.
const HOST = 'svc-hs.test'
const ISSUER = 'http://svc-hs.test'
const BILLING = { id: 'cc000000-0000-4000-8000-000000000001', secret: 'billing-secret-01' }
const MAILER = { id: 'cc000000-0000-4000-8000-000000000002', secret: 'mailer-secret-012' }
const WEB = { id: 'cc000000-0000-4000-8000-000000000003', secret: 'web-secret-012345' }
const PUBLIC_APP = 'cc000000-0000-4000-8000-000000000004'
const API = { id: 'cc000000-0000-4000-8000-000000000005', secret: 'api-secret-012345' }
const RS = {
  host: 'svc-rs.test',
  issuer: 'http://svc-rs.test',
  audience: 'https://api.svc-rs.test',
  id: 'cc000000-0000-4000-8000-000000000011',
  secret: 'reports-secret-01',
}
const CLAIMS = ['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'scope', 'sub']

describe('POST /token (client_credentials)', () => {
  const issuer = useIssuer({ config: 'service' })

  function serviceToken(
    params: Record<string, string> = {},
    client = BILLING,
    host = HOST,
  ): Promise<HttpResponse> {
    return postForm(issuer.url, host, {
      grant_type: 'client_credentials',
      client_id: client.id,
      client_secret: client.secret,
      ...params,
    })
  }

  async function accessToken(params: Record<string, string> = {}, client = BILLING) {
    const res = await serviceToken(params, client)
    expect(res.status).toBe(200)
    return (res.json as { access_token: string }).access_token
  }

  /** POST to /introspect or /revoke, authenticated by HTTP Basic as `as`. */
  function asClient(path: string, as: { id: string; secret: string }, token: string) {
    return send(issuer.url, {
      method: 'POST',
      path,
      host: HOST,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(as.id, as.secret),
      },
      body: new URLSearchParams({ token }).toString(),
    })
  }
  async function introspect(token: string, as = BILLING): Promise<Record<string, unknown>> {
    const res = await asClient('/introspect', as, token)
    expect(res.status).toBe(200)
    return res.json as Record<string, unknown>
  }

  it('issues an HS256 token about the client itself, with its scopes and no refresh token', async () => {
    const before = Math.floor(Date.now() / 1000)
    const res = await serviceToken()
    expect(res.status).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json).toEqual({
      access_token: expect.any(String) as string,
      token_type: 'bearer',
      expires_in: 7200,
      scope: 'orders:read orders:write',
    })
    const token = (res.json as { access_token: string }).access_token
    const { payload, protectedHeader } = await jwtVerify(
      token,
      new TextEncoder().encode(JWT_SECRET),
      { issuer: ISSUER, audience: ISSUER, algorithms: ['HS256'] },
    )
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(Object.keys(payload).sort()).toEqual(CLAIMS)
    expect(payload).toMatchObject({
      sub: BILLING.id,
      client_id: BILLING.id,
      scope: 'orders:read orders:write',
    })
    expect(payload.iat).toBeGreaterThanOrEqual(before)
    expect(payload.exp! - payload.iat!).toBe(7200)
    // A jti of its own, naming no refresh family.
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('issues an RS256 token with a kid that verifies against the tenant JWKS', async () => {
    const res = await serviceToken({}, RS, RS.host)
    expect(res.status).toBe(200)
    expect(res.json).not.toHaveProperty('refresh_token')
    const token = (res.json as { access_token: string }).access_token
    const jwks = await send(issuer.url, { path: '/.well-known/jwks.json', host: RS.host })
    const { payload, protectedHeader } = await jwtVerify(
      token,
      createLocalJWKSet(jwks.json as { keys: [] }),
      { issuer: RS.issuer, audience: RS.audience, algorithms: ['RS256'] },
    )
    expect(protectedHeader.kid).toMatch(/^\d{4}-\d{2}-\d{2}(\.\d+)?$/)
    expect(Object.keys(payload).sort()).toEqual(CLAIMS)
    expect(payload).toMatchObject({ sub: RS.id, client_id: RS.id, scope: 'reports:read' })
  })

  it('accepts HTTP Basic and a JSON body alike', async () => {
    const res = await postJson(
      issuer.url,
      HOST,
      { grant_type: 'client_credentials', scope: 'orders:read' },
      { authorization: basicAuth(BILLING.id, BILLING.secret) },
    )
    expect(res.status).toBe(200)
    expect(decodeJwt((res.json as { access_token: string }).access_token)).toMatchObject({
      sub: BILLING.id,
      scope: 'orders:read',
    })
  })

  it('names the client as configured, whatever the case of the client_id sent', async () => {
    const res = await serviceToken({ client_id: BILLING.id.toUpperCase() })
    expect(res.status).toBe(200)
    const payload = decodeJwt((res.json as { access_token: string }).access_token)
    expect(payload).toMatchObject({ sub: BILLING.id, client_id: BILLING.id })
  })

  it('narrows the scope to the one asked for, and refuses one outside the client', async () => {
    const narrowed = await serviceToken({ scope: 'orders:write' })
    expect(narrowed.status).toBe(200)
    expect((narrowed.json as { scope: string }).scope).toBe('orders:write')
    expect(decodeJwt((narrowed.json as { access_token: string }).access_token).scope).toBe(
      'orders:write',
    )
    const twice = await serviceToken({ scope: 'orders:read  orders:read' })
    expect((twice.json as { scope: string }).scope).toBe('orders:read')

    for (const scope of ['orders:read admin', 'mail:send', 'orders:read\u0000', 'x'.repeat(5000)]) {
      const res = await serviceToken({ scope })
      expect(res.status).toBe(400)
      expect((res.json as { error: string }).error).toBe('invalid_scope')
    }
  })

  it('refuses a public client and a client that does not list the grant with unauthorized_client', async () => {
    const publicApp = await postForm(issuer.url, HOST, {
      grant_type: 'client_credentials',
      client_id: PUBLIC_APP,
    })
    expect(publicApp.status).toBe(400)
    expect(publicApp.json).toEqual({
      error: 'unauthorized_client',
      error_description: 'the client_credentials grant needs a confidential client',
    })
    const web = await serviceToken({}, WEB)
    expect(web.status).toBe(400)
    expect(web.json).toEqual({
      error: 'unauthorized_client',
      error_description: 'the client_credentials grant is not enabled for this client',
    })
  })

  it.each([
    ['a wrong secret', { client_secret: 'nope' }],
    ['no secret', { client_secret: '' }],
    ['a secret sent for the public client', { client_id: PUBLIC_APP }],
    ['an unknown client', { client_id: 'cc000000-0000-4000-8000-0000000000ff' }],
    ['a client_id of 10 kB', { client_id: 'c'.repeat(10_000) }],
    ['a client_id with control characters', { client_id: 'cc\r\n\u0000\u202e' }],
  ])('answers %s with 401 invalid_client', async (_name, change) => {
    const res = await serviceToken(change)
    expect(res.status).toBe(401)
    expect(res.json).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    })
    expect(res.headers['www-authenticate']).toBeUndefined()
  })

  it('answers a wrong secret over HTTP Basic with 401 and a Basic challenge', async () => {
    const res = await postForm(
      issuer.url,
      HOST,
      { grant_type: 'client_credentials' },
      { authorization: basicAuth(BILLING.id, 'nope') },
    )
    expect(res.status).toBe(401)
    expect(res.headers['www-authenticate']).toMatch(/^Basic /)
    expect((res.json as { error: string }).error).toBe('invalid_client')
  })

  it.each([
    ['username', { username: 'alice', password: 'alice-password' }],
    ['password', { password: 'alice-password' }],
    ['refresh_token', { refresh_token: 'rt' }],
    ['code', { code: 'c', redirect_uri: 'http://localhost:9000/cb' }],
  ])('refuses %s sent along with invalid_request', async (name, extra) => {
    const res = await serviceToken(extra)
    expect(res.status).toBe(400)
    expect(res.json).toEqual({
      error: 'invalid_request',
      error_description: `${name} is not a parameter of the client_credentials grant`,
    })
  })

  it('ignores parameters that no grant knows, and refuses wrong types and repeats', async () => {
    expect((await serviceToken({ audience: 'evil', requested_token_use: 'x' })).status).toBe(200)
    const typed = await postJson(issuer.url, HOST, {
      grant_type: 'client_credentials',
      client_id: BILLING.id,
      client_secret: BILLING.secret,
      scope: ['orders:read'],
    })
    expect(typed.status).toBe(400)
    expect((typed.json as { error: string }).error).toBe('invalid_request')
    const repeated = await send(issuer.url, {
      method: 'POST',
      path: '/token',
      host: HOST,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${BILLING.id}&client_secret=${BILLING.secret}&scope=orders:read&scope=orders:write`,
    })
    expect(repeated.status).toBe(400)
    expect(repeated.json).toEqual({
      error: 'invalid_request',
      error_description: 'parameter "scope" is repeated',
    })
    const huge = await serviceToken({ scope: 'orders:read', padding: 'x'.repeat(2_000_000) })
    expect(huge.status).toBe(413)
    expect((huge.json as { error: string }).error).toBe('invalid_request')
  })

  it('issues 100 tokens at once, each with its own jti', async () => {
    const responses = await Promise.all(Array.from({ length: 100 }, () => serviceToken()))
    expect(responses.map((res) => res.status)).toEqual(Array(100).fill(200))
    const jtis = responses.map(
      (res) => decodeJwt((res.json as { access_token: string }).access_token).jti,
    )
    expect(new Set(jtis).size).toBe(100)
  }, 60_000)

  it('introspects a token for its own client and the resource server, no one else', async () => {
    const token = await accessToken({ scope: 'orders:read' })
    const own = await introspect(token)
    expect(own).toMatchObject({
      active: true,
      token_type: 'bearer',
      sub: BILLING.id,
      client_id: BILLING.id,
      scope: 'orders:read',
      iss: ISSUER,
    })
    expect(await introspect(token, API)).toMatchObject({ active: true, sub: BILLING.id })
    expect(await introspect(token, MAILER)).toEqual({ active: false })
  })

  it('revokes a token on its own client request only; others change nothing', async () => {
    const token = await accessToken()
    const sibling = await accessToken()
    expect((await asClient('/revoke', MAILER, token)).status).toBe(200)
    expect((await asClient('/revoke', API, token)).status).toBe(200)
    expect(await introspect(token)).toMatchObject({ active: true })

    // Many revocations of one token at once: all answered 200, one mark, and it stays revoked.
    const revocations = await Promise.all(
      Array.from({ length: 20 }, () => asClient('/revoke', BILLING, token)),
    )
    expect(revocations.map((res) => res.status)).toEqual(Array(20).fill(200))
    expect(await introspect(token)).toEqual({ active: false })
    expect(await introspect(token, API)).toEqual({ active: false })
    // Revoking one token of a service leaves its other tokens, and new ones, alone.
    expect(await introspect(sibling)).toMatchObject({ active: true })
    expect(await introspect(await accessToken())).toMatchObject({ active: true })
  })

  it('lists the grant in the metadata of every tenant', async () => {
    for (const host of [HOST, RS.host]) {
      const res = await send(issuer.url, { path: '/.well-known/oauth-authorization-server', host })
      expect((res.json as { grant_types_supported: string[] }).grant_types_supported).toContain(
        'client_credentials',
      )
    }
  })

  it('never logs a secret or a token', async () => {
    const token = await accessToken()
    await asClient('/revoke', BILLING, token)
    await serviceToken({ client_secret: 'wrong-secret-value' })
    const log = issuer.logs.join('\n')
    // The requests were logged (one line each), just without their credentials.
    expect(log).toMatch(/"path":"\/revoke"/)
    for (const secret of [BILLING.secret, MAILER.secret, API.secret, 'wrong-secret-value', token]) {
      expect(log).not.toContain(secret)
    }
    expect(log).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/)
  })
})
