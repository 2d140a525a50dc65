import { jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { basicAuth, postForm } from '../support/http.js'
import { HS, JWT_SECRET, RS, useIssuer } from '../support/issuer.js'
import { pkce, SECOND_APP, signIn, SPA } from '../support/oauth.js'

describe('POST /token (authorization_code)', () => {
  const clock = { now: Date.UTC(2026, 10, 22, 12) }

  const issuer = useIssuer({ clock: () => clock.now })

  function redeem(
    params: Record<string, string | undefined>,
    headers: Record<string, string> = {},
  ) {
    const body: Record<string, string> = {}
    for (const [name, value] of Object.entries(params)) if (value !== undefined) body[name] = value
    return postForm(issuer.url, HS.host, { grant_type: 'authorization_code', ...body }, headers)
  }

  it('exchanges a code for an access token and a refresh token', async () => {
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HS.host, { challenge, scope: 'read' })
    const res = await redeem({
      code,
      redirect_uri: SPA.redirectUri,
      code_verifier: verifier,
      client_id: SPA.clientId,
    })
    expect(res.status).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json as Record<string, string>
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 7200, scope: 'read' })
    expect(body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const { payload } = await jwtVerify(body.access_token!, new TextEncoder().encode(JWT_SECRET), {
      issuer: HS.issuer,
      // The issuer runs on the test's clock; so must the check of exp.
      currentDate: new Date(clock.now),
    })
    expect(payload).toMatchObject({ sub: 'user-alice', client_id: SPA.clientId, role: 'tester' })
  })

  it('lets a confidential client without PKCE sign in and redeem with HTTP Basic', async () => {
    const { code } = await signIn(issuer.url, RS.host, {
      clientId: RS.client,
      redirectUri: 'http://localhost:9000/cb',
    })
    const res = await postForm(
      issuer.url,
      RS.host,
      { grant_type: 'authorization_code', code, redirect_uri: 'http://localhost:9000/cb' },
      { authorization: basicAuth(RS.client, RS.secret) },
    )
    expect(res.status).toBe(200)
    expect(res.json).toHaveProperty('refresh_token')
  })

  it('gives no refresh token to a client that does not list the refresh grant', async () => {
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HS.host, { clientId: SECOND_APP, challenge })
    const res = await redeem({
      code,
      redirect_uri: SPA.redirectUri,
      code_verifier: verifier,
      client_id: SECOND_APP,
    })
    expect(res.status).toBe(200)
    expect(res.json).not.toHaveProperty('refresh_token')
  })

  describe('refusals', () => {
    const cases: Array<
      [
        string,
        (c: { code: string; verifier: string }) => Record<string, string | undefined>,
        number,
        string,
        string,
      ]
    > = [
      [
        'a wrong code_verifier',
        (c) => ({ code: c.code, code_verifier: pkce().verifier }),
        400,
        'invalid_grant',
        'code_verifier does not match the code challenge',
      ],
      [
        'a missing code_verifier',
        (c) => ({ code: c.code, code_verifier: undefined }),
        400,
        'invalid_grant',
        'code_verifier is required',
      ],
      [
        'a malformed code_verifier (too short)',
        (c) => ({ code: c.code, code_verifier: 'abc' }),
        400,
        'invalid_request',
        'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~"',
      ],
      [
        'a malformed code_verifier (bad characters)',
        (c) => ({ code: c.code, code_verifier: `${c.verifier.slice(0, 42)}!+` }),
        400,
        'invalid_request',
        'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~"',
      ],
      [
        'a differing redirect_uri',
        (c) => ({
          code: c.code,
          code_verifier: c.verifier,
          redirect_uri: 'http://localhost:9000/cb2?tenant=hs',
        }),
        400,
        'invalid_grant',
        'redirect_uri does not match the authorization request',
      ],
      [
        'a missing redirect_uri',
        (c) => ({ code: c.code, code_verifier: c.verifier, redirect_uri: undefined }),
        400,
        'invalid_request',
        'redirect_uri is required',
      ],
      [
        'a code of another client',
        (c) => ({ code: c.code, code_verifier: c.verifier, client_id: SECOND_APP }),
        400,
        'invalid_grant',
        'invalid authorization code',
      ],
      [
        'a made-up code',
        (c) => ({ code: `${c.code}x`, code_verifier: c.verifier }),
        400,
        'invalid_grant',
        'invalid authorization code',
      ],
      [
        'a missing code',
        (c) => ({ code: undefined, code_verifier: c.verifier }),
        400,
        'invalid_request',
        'code is required',
      ],
    ]
    it.each(cases)('answers %s with %s %s', async (_name, change, status, error, description) => {
      const { verifier, challenge } = pkce()
      const { code } = await signIn(issuer.url, HS.host, { challenge })
      const res = await redeem({
        redirect_uri: SPA.redirectUri,
        client_id: SPA.clientId,
        ...change({ code, verifier }),
      })
      expect(res.status).toBe(status)
      expect(res.json).toEqual({ error, error_description: description })
      // The refused attempt did not burn the code: the right request still works.
      const retry = await redeem({
        code,
        redirect_uri: SPA.redirectUri,
        code_verifier: verifier,
        client_id: SPA.clientId,
      })
      expect(retry.status).toBe(200)
    })

    it('refuses an expired code (injected clock, no sleeping)', async () => {
      const { verifier, challenge } = pkce()
      const { code } = await signIn(issuer.url, HS.host, { challenge })
      clock.now += 61_000
      try {
        const res = await redeem({
          code,
          redirect_uri: SPA.redirectUri,
          code_verifier: verifier,
          client_id: SPA.clientId,
        })
        expect(res.status).toBe(400)
        expect(res.json).toEqual({
          error: 'invalid_grant',
          error_description: 'authorization code expired',
        })
      } finally {
        clock.now -= 61_000
      }
    })

    it('refuses a code_verifier for a code issued without PKCE', async () => {
      const { code } = await signIn(issuer.url, RS.host, {
        clientId: RS.client,
        redirectUri: 'http://localhost:9000/cb',
      })
      const res = await postForm(
        issuer.url,
        RS.host,
        {
          grant_type: 'authorization_code',
          code,
          redirect_uri: 'http://localhost:9000/cb',
          code_verifier: pkce().verifier,
        },
        { authorization: basicAuth(RS.client, RS.secret) },
      )
      expect(res.json).toMatchObject({ error: 'invalid_grant' })
    })
  })

  it('refuses a replayed code and revokes the refresh tokens it issued', async () => {
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HS.host, { challenge })
    const params = {
      code,
      redirect_uri: SPA.redirectUri,
      code_verifier: verifier,
      client_id: SPA.clientId,
    }
    const first = await redeem(params)
    expect(first.status).toBe(200)
    const replay = await redeem(params)
    expect(replay.status).toBe(400)
    expect(replay.json).toEqual({
      error: 'invalid_grant',
      error_description: 'authorization code already used',
    })
    const refresh = await postForm(issuer.url, HS.host, {
      grant_type: 'refresh_token',
      refresh_token: (first.json as { refresh_token: string }).refresh_token,
      client_id: SPA.clientId,
    })
    expect(refresh.status).toBe(400)
    expect(refresh.json).toMatchObject({ error: 'invalid_grant' })
  })

  it('redeems a code exactly once under 20 concurrent requests', async () => {
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HS.host, { challenge })
    const params = {
      code,
      redirect_uri: SPA.redirectUri,
      code_verifier: verifier,
      client_id: SPA.clientId,
    }
    const results = await Promise.all(Array.from({ length: 20 }, () => redeem(params)))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 400)).toHaveLength(19)
    for (const r of results.filter((r) => r.status === 400)) {
      expect(r.json).toMatchObject({ error: 'invalid_grant' })
    }
  })
})
