import { describe, expect, it } from 'vitest'
import { basicAuth, postForm, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { signIn } from '../support/oauth.js'

// Introspection that tells the truth, over HTTP against an issuer on SQLite.
const HOST = 'shop.test'
const CB = 'http://localhost:9000/cb'
const APP = { id: '0a000000-0000-4000-8000-000000000001', secret: 'app-secret-012345' }
const OTHER = { id: '0a000000-0000-4000-8000-000000000002', secret: 'other-secret-0123' }
const CODE_ONLY = { id: '0a000000-0000-4000-8000-000000000003', secret: 'code-only-secret' }
const API = { id: '0a000000-0000-4000-8000-000000000004', secret: 'api-secret-012345' }
const SPA = '0a000000-0000-4000-8000-000000000005'

type Client = { id: string; secret: string }
interface Tokens {
  access_token: string
  refresh_token?: string
}

describe('POST /introspect and POST /revoke: the truth about a token', () => {
  const issuer = useIssuer({ config: 'introspect' })

  function post(path: string, client: Client, params: Record<string, string>) {
    return send(issuer.url, {
      method: 'POST',
      path,
      host: HOST,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(client.id, client.secret),
      },
      body: new URLSearchParams(params).toString(),
    })
  }

  async function introspect(
    token: string,
    client: Client = APP,
    hint?: string,
  ): Promise<Record<string, unknown>> {
    const res = await post('/introspect', client, {
      token,
      ...(hint === undefined ? {} : { token_type_hint: hint }),
    })
    expect(res.status).toBe(200)
    return res.json as Record<string, unknown>
  }

  async function revoke(token: string, client: Client = APP, hint?: string): Promise<void> {
    const res = await post('/revoke', client, {
      token,
      ...(hint === undefined ? {} : { token_type_hint: hint }),
    })
    expect(res.status).toBe(200)
    expect(res.text).toBe('')
  }

  async function redeem(code: string, client: Client): Promise<HttpResponse> {
    return postForm(
      issuer.url,
      HOST,
      { grant_type: 'authorization_code', code, redirect_uri: CB },
      { authorization: basicAuth(client.id, client.secret) },
    )
  }

  /** A sign-in through the login form, then the code redeemed: what a web app holds. */
  async function signedIn(client: Client = APP): Promise<Tokens & { code: string }> {
    const { code } = await signIn(issuer.url, HOST, { clientId: client.id, redirectUri: CB })
    const res = await redeem(code, client)
    expect(res.status).toBe(200)
    return { ...(res.json as Tokens), code }
  }

  async function refresh(refreshToken: string, client: Client = APP): Promise<HttpResponse> {
    return postForm(
      issuer.url,
      HOST,
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      { authorization: basicAuth(client.id, client.secret) },
    )
  }

  async function passwordToken(client: Client = APP): Promise<string> {
    const res = await postForm(
      issuer.url,
      HOST,
      { grant_type: 'password', username: 'bob', password: 'bob-password' },
      { authorization: basicAuth(client.id, client.secret) },
    )
    expect(res.status).toBe(200)
    return (res.json as Tokens).access_token
  }

  describe('what is reported', () => {
    it('says token_type bearer for an access token and refresh_token for a refresh token', async () => {
      const t = await signedIn()
      expect(await introspect(t.access_token)).toMatchObject({
        active: true,
        token_type: 'bearer',
        client_id: APP.id,
        sub: 'user-alice',
        iss: 'http://shop.test',
        scope: 'read write',
      })
      expect(await introspect(t.refresh_token!)).toMatchObject({
        active: true,
        token_type: 'refresh_token',
        client_id: APP.id,
      })
    })

    it('finds a token whatever its hint says: the hint only orders the search', async () => {
      const t = await signedIn()
      expect(await introspect(t.refresh_token!, APP, 'access_token')).toMatchObject({
        active: true,
        token_type: 'refresh_token',
      })
      expect(await introspect(t.access_token, APP, 'refresh_token')).toMatchObject({
        active: true,
        token_type: 'bearer',
      })
      expect(await introspect(t.access_token, APP, 'no_such_hint')).toMatchObject({
        active: true,
      })
    })
  })

  describe('who may ask', () => {
    it('shows a client its own tokens, a tenant-wide client every token, a public client none', async () => {
      const t = await signedIn()
      // Another confidential client learns nothing, not even that the token exists.
      expect(await introspect(t.access_token, OTHER)).toEqual({ active: false })
      expect(await introspect(t.refresh_token!, OTHER)).toEqual({ active: false })
      expect(await introspect(t.access_token, OTHER, 'refresh_token')).toEqual({ active: false })
      // The resource server sees them all, names and claims included.
      expect(await introspect(t.access_token, API)).toMatchObject({
        active: true,
        client_id: APP.id,
        role: 'tester',
      })
      expect(await introspect(t.refresh_token!, API)).toMatchObject({ active: true })
      const publicClient = await send(issuer.url, {
        method: 'POST',
        path: '/introspect',
        host: HOST,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: t.access_token, client_id: SPA }).toString(),
      })
      expect(publicClient.status).toBe(401)
      expect(publicClient.json).toMatchObject({ error: 'invalid_client' })
    })
  })

  describe('when an access token stops being active', () => {
    it('once its authorization code is replayed, with or without a refresh token', async () => {
      for (const client of [APP, CODE_ONLY]) {
        const t = await signedIn(client)
        expect(await introspect(t.access_token, client)).toMatchObject({ active: true })
        const replay = await redeem(t.code, client)
        expect(replay.json).toMatchObject({ error: 'invalid_grant' })
        expect(await introspect(t.access_token, client)).toEqual({ active: false })
        expect(await introspect(t.access_token, API)).toEqual({ active: false })
        if (t.refresh_token !== undefined) {
          expect(await introspect(t.refresh_token, client)).toEqual({ active: false })
        }
      }
    })

    it('once a spent refresh token of its family is reused', async () => {
      const t = await signedIn()
      const refreshed = await refresh(t.refresh_token!)
      expect(refreshed.status).toBe(200)
      const next = refreshed.json as Required<Tokens>
      expect(await introspect(next.access_token)).toMatchObject({ active: true })
      expect((await refresh(t.refresh_token!)).json).toMatchObject({ error: 'invalid_grant' })
      expect(await introspect(t.access_token)).toEqual({ active: false })
      expect(await introspect(next.access_token)).toEqual({ active: false })
      expect(await introspect(next.refresh_token)).toEqual({ active: false })
    })

    it('once its refresh token is revoked, and a sign-in of its own stays active', async () => {
      const t = await signedIn()
      const unrelated = await signedIn()
      await revoke(t.refresh_token!, APP, 'refresh_token')
      expect(await introspect(t.refresh_token!)).toEqual({ active: false })
      expect(await introspect(t.access_token)).toEqual({ active: false })
      expect(await introspect(unrelated.access_token)).toMatchObject({ active: true })
    })

    it('once it is revoked itself; its refresh token and sibling tokens stay active', async () => {
      const t = await signedIn()
      const sibling = ((await refresh(t.refresh_token!)).json as Required<Tokens>).access_token
      await revoke(t.access_token)
      expect(await introspect(t.access_token)).toEqual({ active: false })
      expect(await introspect(t.access_token, API)).toEqual({ active: false })
      expect(await introspect(sibling)).toMatchObject({ active: true })
      // A password-grant token has no family; it is revoked all the same.
      const plain = await passwordToken()
      await revoke(plain, APP, 'access_token')
      expect(await introspect(plain)).toEqual({ active: false })
      // Revoking twice is as quiet as revoking once.
      await revoke(plain)
      expect(await introspect(plain)).toEqual({ active: false })
    })

    it('not when another client asks /revoke: 200, and nothing changes', async () => {
      const t = await signedIn()
      await revoke(t.access_token, OTHER)
      await revoke(t.access_token, API)
      await revoke(t.refresh_token!, OTHER)
      expect(await introspect(t.access_token)).toMatchObject({ active: true })
      expect(await introspect(t.refresh_token!)).toMatchObject({ active: true })
    })
  })

  describe('hostile input', () => {
    it('answers inactive or a clean 4xx, never a 500', async () => {
      const t = await signedIn()
      const [header, payload, signature] = t.access_token.split('.') as [string, string, string]
      const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`
      const swapped = `${header}.${Buffer.from('{"sub":"mallory"}').toString('base64url')}.${signature}`
      for (const token of [
        'garbage',
        'a.b.c',
        none,
        swapped,
        `${t.access_token}x`,
        'x'.repeat(8000),
        '\u0000\u00ff\ud83d\ude00',
        `${t.refresh_token!}.`,
      ]) {
        expect(await introspect(token)).toEqual({ active: false })
        await revoke(token)
      }
      expect(await introspect(t.access_token)).toMatchObject({ active: true })
      const noToken = await post('/introspect', APP, { token_type_hint: 'access_token' })
      expect(noToken.status).toBe(400)
      expect(noToken.json).toMatchObject({ error: 'invalid_request' })
      const notString = await send(issuer.url, {
        method: 'POST',
        path: '/revoke',
        host: HOST,
        headers: {
          'content-type': 'application/json',
          authorization: basicAuth(APP.id, APP.secret),
        },
        body: JSON.stringify({ token: { jti: 'x' } }),
      })
      expect(notString.status).toBe(400)
      expect(notString.json).toMatchObject({ error: 'invalid_request' })
    })

    it('survives 40 concurrent /revoke and 40 /introspect of one token, ending inactive', async () => {
      const t = await signedIn()
      const requests: Promise<HttpResponse>[] = []
      for (let i = 0; i < 40; i++) {
        requests.push(post('/revoke', APP, { token: t.access_token }))
        requests.push(post('/introspect', APP, { token: t.access_token }))
        requests.push(post('/introspect', API, { token: t.refresh_token! }))
      }
      const responses = await Promise.all(requests)
      expect(responses.map((res) => res.status)).toEqual(responses.map(() => 200))
      for (const res of responses) {
        if (res.text !== '') expect(res.json).toHaveProperty('active')
      }
      expect(await introspect(t.access_token)).toEqual({ active: false })
      expect(await introspect(t.refresh_token!)).toMatchObject({ active: true })
    })

    it('survives concurrent /revoke of a refresh token, refreshes and introspections, ending inactive', async () => {
      const t = await signedIn()
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 3 === 0
            ? post('/revoke', APP, { token: t.refresh_token! })
            : i % 3 === 1
              ? refresh(t.refresh_token!)
              : post('/introspect', APP, { token: t.access_token }),
        ),
      )
      for (const res of responses) expect([200, 400]).toContain(res.status)
      const issued = responses
        .map((res) => (res.json as Partial<Tokens> | undefined)?.access_token)
        .filter((token): token is string => token !== undefined)
      // Whatever won, the sign-in ends revoked: every token of it is inactive.
      for (const token of [t.access_token, t.refresh_token!, ...issued]) {
        expect(await introspect(token)).toEqual({ active: false })
      }
    })
  })
})
