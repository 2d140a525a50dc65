import { createSecretKey } from 'node:crypto'
import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { basicAuth, postForm, send } from '../support/http.js'
import { HS, JWT_SECRET, RS, useIssuer } from '../support/issuer.js'
import { signIn } from '../support/oauth.js'

const CB = 'http://localhost:9000/cb'

describe('POST /revoke and POST /introspect', () => {
  const issuer = useIssuer()

  const auth = { authorization: basicAuth(RS.client, RS.secret) }

  async function tokens(): Promise<{ access_token: string; refresh_token: string }> {
    const { code } = await signIn(issuer.url, RS.host, { clientId: RS.client, redirectUri: CB })
    const res = await postForm(
      issuer.url,
      RS.host,
      { grant_type: 'authorization_code', code, redirect_uri: CB },
      auth,
    )
    return res.json as { access_token: string; refresh_token: string }
  }

  function post(path: string, params: Record<string, string>, headers = auth) {
    return send(issuer.url, {
      method: 'POST',
      path,
      host: RS.host,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(params).toString(),
    })
  }

  it('introspects live refresh and access tokens, and says inactive for others', async () => {
    const t = await tokens()
    const refresh = await post('/introspect', { token: t.refresh_token })
    expect(refresh.status).toBe(200)
    expect(refresh.headers['cache-control']).toBe('no-store')
    expect(refresh.json).toMatchObject({
      active: true,
      token_type: 'refresh_token',
      client_id: RS.client,
      sub: 'user-alice',
      iss: RS.issuer,
    })
    const access = await post('/introspect', { token: t.access_token })
    expect(access.json).toMatchObject({
      active: true,
      token_type: 'bearer',
      iss: RS.issuer,
      aud: RS.audience,
      sub: 'user-alice',
    })
    expect((await post('/introspect', { token: 'garbage' })).json).toEqual({ active: false })
    const forged = `${t.access_token.slice(0, -4)}AAAA`
    expect((await post('/introspect', { token: forged })).json).toEqual({ active: false })
  })

  it('revokes a refresh token and its family; the token then neither refreshes nor introspects', async () => {
    const t = await tokens()
    const res = await post('/revoke', { token: t.refresh_token, token_type_hint: 'refresh_token' })
    expect(res.status).toBe(200)
    expect(res.text).toBe('')
    const refreshed = await postForm(
      issuer.url,
      RS.host,
      { grant_type: 'refresh_token', refresh_token: t.refresh_token },
      auth,
    )
    expect(refreshed.json).toMatchObject({ error: 'invalid_grant' })
    expect((await post('/introspect', { token: t.refresh_token })).json).toEqual({ active: false })
  })

  it('answers 200 for an unknown token, and revokes an access token', async () => {
    expect((await post('/revoke', { token: 'unknown-token' })).status).toBe(200)
    expect((await post('/revoke', { token: 'a.b.c' })).status).toBe(200)
    const t = await tokens()
    const res = await post('/revoke', { token: t.access_token })
    expect(res.status).toBe(200)
    expect(res.text).toBe('')
    expect((await post('/introspect', { token: t.access_token })).json).toEqual({ active: false })
  })

  it('takes a token with a jti it never issues for inactive, without a 500', async () => {
    const hsAuth = { authorization: basicAuth(HS.client, HS.secret) }
    const now = Math.floor(Date.now() / 1000)
    for (const jti of ['x'.repeat(600), 'a.b.c', '\ud800', undefined]) {
      // Only a holder of the HS256 secret could sign these.
      const token = await new SignJWT({
        client_id: HS.client,
        ...(jti === undefined ? {} : { jti }),
      })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(HS.issuer)
        .setSubject('user-alice')
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(createSecretKey(Buffer.from(JWT_SECRET, 'utf8')))
      const revoked = await send(issuer.url, {
        method: 'POST',
        path: '/revoke',
        host: HS.host,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...hsAuth },
        body: new URLSearchParams({ token }).toString(),
      })
      expect(revoked.status).toBe(200)
      const introspected = await send(issuer.url, {
        method: 'POST',
        path: '/introspect',
        host: HS.host,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...hsAuth },
        body: new URLSearchParams({ token }).toString(),
      })
      expect(introspected.status).toBe(200)
      expect(introspected.json).toEqual({ active: false })
    }
  })

  it('takes a token with an exp it never writes for inactive, and /revoke without a 500', async () => {
    const hsAuth = { authorization: basicAuth(HS.client, HS.secret) }
    const now = Math.floor(Date.now() / 1000)
    // Past Number.MAX_SAFE_INTEGER once in milliseconds, or not whole seconds: Tessera writes
    // exp as iat + the lifetime, in whole seconds.
    for (const exp of [1e300, 2 ** 53 + 2, now + 600.5]) {
      const token = await new SignJWT({ client_id: HS.client, jti: crypto.randomUUID(), exp })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(HS.issuer)
        .setSubject('user-alice')
        .setIssuedAt(now)
        .sign(createSecretKey(Buffer.from(JWT_SECRET, 'utf8')))
      const request = (path: string) =>
        send(issuer.url, {
          method: 'POST',
          path,
          host: HS.host,
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...hsAuth },
          body: new URLSearchParams({ token }).toString(),
        })
      expect((await request('/introspect')).json).toEqual({ active: false })
      const revoked = await request('/revoke')
      expect([revoked.status, revoked.text]).toEqual([200, ''])
      expect((await request('/introspect')).json).toEqual({ active: false })
    }
  })

  it('requires client authentication, and introspection a confidential client', async () => {
    const t = await tokens()
    const unauthenticated = await post(
      '/revoke',
      { token: t.refresh_token },
      { authorization: basicAuth(RS.client, 'wrong') },
    )
    expect(unauthenticated.status).toBe(401)
    expect(unauthenticated.headers['www-authenticate']).toMatch(/^Basic/)
    const publicClient = await send(issuer.url, {
      method: 'POST',
      path: '/introspect',
      host: HS.host,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: 'x',
        client_id: '22222222-2222-4222-8222-222222222222',
      }).toString(),
    })
    expect(publicClient.status).toBe(401)
    expect(publicClient.json).toMatchObject({ error: 'invalid_client' })
    // Still live: the failed revocation changed nothing.
    expect((await post('/introspect', { token: t.refresh_token })).json).toMatchObject({
      active: true,
    })
  })
})
