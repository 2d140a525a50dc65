import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { basicAuth, postForm, postJson, send } from '../support/http.js'
import { HS, JWT_SECRET, RS, useIssuer } from '../support/issuer.js'

const CLAIMS = ['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'role', 'scope', 'sub']

describe('POST /token (password)', () => {
  const issuer = useIssuer()

  async function tokenFor(host: string, client: string, secret: string): Promise<string> {
    const res = await postForm(issuer.url, host, {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-password',
      client_id: client,
      client_secret: secret,
    })
    expect(res.status).toBe(200)
    return (res.json as { access_token: string }).access_token
  }

  it('issues an HS256 token that verifies with JWT_SECRET', async () => {
    const res = await postForm(issuer.url, HS.host, {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-password',
      scope: 'read',
      client_id: HS.client,
      client_secret: HS.secret,
    })
    expect(res.status).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json as Record<string, unknown>
    expect(body).toEqual({
      access_token: expect.any(String) as string,
      token_type: 'bearer',
      expires_in: 7200,
      scope: 'read',
    })
    expect(body).not.toHaveProperty('refresh_token')
    const { payload, protectedHeader } = await jwtVerify(
      body.access_token as string,
      new TextEncoder().encode(JWT_SECRET),
      { issuer: HS.issuer, audience: HS.issuer, algorithms: ['HS256'] },
    )
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(payload).toMatchObject({ sub: 'user-alice', client_id: HS.client, scope: 'read' })
    expect(payload.exp! - payload.iat!).toBe(7200)
  })

  it('issues an RS256 token with a kid that verifies against the tenant JWKS', async () => {
    const token = await tokenFor(RS.host, RS.client, RS.secret)
    const jwks = await send(issuer.url, { path: '/.well-known/jwks.json', host: RS.host })
    const { payload, protectedHeader } = await jwtVerify(
      token,
      createLocalJWKSet(jwks.json as { keys: [] }),
      { issuer: RS.issuer, audience: RS.audience, algorithms: ['RS256'] },
    )
    expect(protectedHeader.alg).toBe('RS256')
    expect(protectedHeader.kid).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(payload.scope).toBe('read write')
  })

  it('uses the same claim names under both algorithms', async () => {
    const hs = await tokenFor(HS.host, HS.client, HS.secret)
    const rs = await tokenFor(RS.host, RS.client, RS.secret)
    const names = (token: string): string[] =>
      Object.keys(
        JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as object,
      ).sort()
    expect(names(hs)).toEqual(CLAIMS)
    expect(names(rs)).toEqual(CLAIMS)
    expect(decodeProtectedHeader(hs).kid).toBeUndefined()
  })

  it('accepts HTTP Basic client authentication and a JSON body alike', async () => {
    const res = await postJson(
      issuer.url,
      HS.host,
      { grant_type: 'password', username: 'bob', password: 'bob-password' },
      { authorization: basicAuth(HS.client, HS.secret) },
    )
    expect(res.status).toBe(200)
  })

  it('serves the same issuer whichever of the tenant hosts is used, port and case ignored', async () => {
    const res = await postForm(issuer.url, 'ALIAS.hs.test:1234', {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-password',
      client_id: HS.client,
      client_secret: HS.secret,
    })
    expect(res.status).toBe(200)
    const token = (res.json as { access_token: string }).access_token
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
      iss: string
    }
    expect(payload.iss).toBe(HS.issuer)
  })

  const good = {
    grant_type: 'password',
    username: 'bob',
    password: 'bob-password',
    client_id: HS.client,
    client_secret: HS.secret,
  }
  it.each([
    ['a wrong password', { password: 'nope' }, 400, 'invalid_grant'],
    ['an unknown user', { username: 'mallory' }, 400, 'invalid_grant'],
    ['a missing username', { username: '' }, 400, 'invalid_request'],
    ['a missing password', { password: '' }, 400, 'invalid_request'],
    ['a missing grant_type', { grant_type: '' }, 400, 'invalid_request'],
    ['an unknown grant_type', { grant_type: 'magic' }, 400, 'unsupported_grant_type'],
    ['the implicit "token" grant', { grant_type: 'token' }, 400, 'unsupported_grant_type'],
    ['a scope outside the client', { scope: 'read admin' }, 400, 'invalid_scope'],
    ['a wrong client secret', { client_secret: 'nope' }, 401, 'invalid_client'],
    [
      'an unknown client',
      { client_id: '99999999-9999-4999-8999-999999999999' },
      401,
      'invalid_client',
    ],
    ['no client at all', { client_id: '', client_secret: '' }, 400, 'invalid_request'],
    [
      'a client without the password grant',
      { client_id: HS.codeOnlyClient, client_secret: '' },
      400,
      'unauthorized_client',
    ],
  ])('answers %s with %s %s', async (_name, change, status, error) => {
    const res = await postForm(issuer.url, HS.host, { ...good, ...change })
    expect(res.status).toBe(status)
    expect(res.json).toEqual({ error, error_description: expect.any(String) as string })
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['www-authenticate']).toBeUndefined()
  })

  it('answers a failed HTTP Basic authentication with 401 and a Basic challenge', async () => {
    const res = await postForm(
      issuer.url,
      HS.host,
      { grant_type: 'password', username: 'bob', password: 'bob-password' },
      { authorization: basicAuth(HS.client, 'wrong') },
    )
    expect(res.status).toBe(401)
    expect(res.json).toMatchObject({ error: 'invalid_client' })
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/)
  })

  it('refuses HTTP Basic together with client_secret in the body', async () => {
    const res = await postForm(
      issuer.url,
      HS.host,
      {
        grant_type: 'password',
        username: 'bob',
        password: 'bob-password',
        client_secret: HS.secret,
      },
      { authorization: basicAuth(HS.client, HS.secret) },
    )
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: 'invalid_request' })
  })

  it('refuses a repeated form parameter', async () => {
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/token',
      host: HS.host,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=password&username=bob&username=alice&password=bob-password&client_id=${HS.client}&client_secret=${HS.secret}`,
    })
    expect(res.status).toBe(400)
    expect(res.json).toEqual({
      error: 'invalid_request',
      error_description: 'parameter "username" is repeated',
    })
  })

  it('answers GET /token with 405 and Allow: POST, OPTIONS (the CORS preflight)', async () => {
    const res = await send(issuer.url, { path: '/token', host: HS.host })
    expect(res.status).toBe(405)
    expect(res.headers.allow).toBe('POST, OPTIONS')
    expect(res.json).toMatchObject({ error: 'invalid_request' })
  })

  it('never writes a password, secret or token into the log', async () => {
    const token = await tokenFor(HS.host, HS.client, HS.secret)
    const log = issuer.logs.join('\n')
    expect(log).toContain('"path":"/token"')
    for (const secret of [
      'alice-password',
      'bob-password',
      HS.secret,
      RS.secret,
      JWT_SECRET,
      token,
    ]) {
      expect(log).not.toContain(secret)
    }
  })
})
