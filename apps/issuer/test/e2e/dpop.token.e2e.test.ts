import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { DP, DPN, dpopKey } from '../support/dpop.js'
import type { DpopKey } from '../support/dpop.js'
import { basicAuth, postForm, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { openLogin, pkce, submitLogin } from '../support/oauth.js'

describe('DPoP at /token', () => {
  const issuer = useIssuer({ config: 'dpop' })

  function clientCredentials(
    client: { id: string; secret: string },
    dpop?: string,
    host = DP.host,
  ): Promise<HttpResponse> {
    return postForm(
      issuer.url,
      host,
      { grant_type: 'client_credentials' },
      {
        authorization: basicAuth(client.id, client.secret),
        ...(dpop === undefined ? {} : { dpop }),
      },
    )
  }

  /** Signs alice in for the client and returns the code and its PKCE verifier. */
  async function code(
    clientId: string,
    extra: Record<string, string> = {},
  ): Promise<{ code: string; verifier: string }> {
    const { verifier, challenge } = pkce()
    const page = await openLogin(issuer.url, DP.host, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: DP.redirectUri,
      scope: 'openid read',
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    })
    const res = await submitLogin(
      issuer.url,
      DP.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.status).toBe(303)
    const found = new URL(res.headers.location!).searchParams.get('code')
    if (found === null) throw new Error(`no code in ${res.headers.location}`)
    return { code: found, verifier }
  }

  function redeem(
    grant: { code: string; verifier: string },
    key: DpopKey | undefined,
    client: { id: string; secret?: string } = { id: DP.spa },
  ): Promise<HttpResponse> {
    return withProof(key, {
      grant_type: 'authorization_code',
      code: grant.code,
      redirect_uri: DP.redirectUri,
      code_verifier: grant.verifier,
      client_id: client.id,
      ...(client.secret === undefined ? {} : { client_secret: client.secret }),
    })
  }

  async function withProof(
    key: DpopKey | undefined,
    params: Record<string, string>,
  ): Promise<HttpResponse> {
    const headers: Record<string, string> = key === undefined ? {} : { dpop: await key.proof() }
    return postForm(issuer.url, DP.host, params, headers)
  }

  function refresh(
    token: string,
    key: DpopKey | undefined,
    client: { id: string; secret?: string } = { id: DP.spa },
  ): Promise<HttpResponse> {
    return withProof(key, {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: client.id,
      ...(client.secret === undefined ? {} : { client_secret: client.secret }),
    })
  }

  const body = (res: HttpResponse) =>
    res.json as { access_token: string; token_type: string; refresh_token: string }

  it('binds a client_credentials token to the proof key: cnf.jkt and token_type DPoP', async () => {
    const key = await dpopKey()
    const res = await clientCredentials(DP.service, await key.proof())
    expect(res.status).toBe(200)
    expect(body(res).token_type).toBe('DPoP')
    expect(decodeJwt(body(res).access_token).cnf).toEqual({ jkt: key.jkt })
  })

  it('binds a password-grant token', async () => {
    const key = await dpopKey()
    const res = await postForm(
      issuer.url,
      DP.host,
      { grant_type: 'password', username: 'alice', password: 'alice-password' },
      { authorization: basicAuth(DP.service.id, DP.service.secret), dpop: await key.proof() },
    )
    expect(res.status).toBe(200)
    expect(body(res).token_type).toBe('DPoP')
    expect(decodeJwt(body(res).access_token).cnf).toEqual({ jkt: key.jkt })
  })

  it('keeps bearer tokens without a proof', async () => {
    const res = await clientCredentials(DP.service)
    expect(res.status).toBe(200)
    expect(body(res).token_type).toBe('bearer')
    expect(decodeJwt(body(res).access_token)).not.toHaveProperty('cnf')
  })

  it.each([['EdDSA'], ['PS256'], ['RS256']])('accepts %s proofs', async (alg) => {
    const key = await dpopKey(alg)
    const res = await clientCredentials(DP.service, await key.proof())
    expect(res.status).toBe(200)
    expect(decodeJwt(body(res).access_token).cnf).toEqual({ jkt: key.jkt })
  })

  it('refuses a replayed proof', async () => {
    const proof = await (await dpopKey()).proof()
    expect((await clientCredentials(DP.service, proof)).status).toBe(200)
    const replay = await clientCredentials(DP.service, proof)
    expect(replay.status).toBe(400)
    expect(replay.json).toMatchObject({ error: 'invalid_dpop_proof' })
  })

  it('of 10 concurrent requests with one proof, exactly one succeeds', async () => {
    const proof = await (await dpopKey()).proof()
    const results = await Promise.all(
      Array.from({ length: 10 }, () => clientCredentials(DP.service, proof)),
    )
    expect(results.map((res) => res.status).sort()).toEqual([200, ...Array<number>(9).fill(400)])
    for (const res of results.filter((r) => r.status === 400)) {
      expect(res.json).toMatchObject({ error: 'invalid_dpop_proof' })
    }
  })

  it.each([
    ['htm GET', { htm: 'GET' }],
    ['htu of another endpoint', { htu: `${DP.issuer}/revoke` }],
    ['htu of another origin', { htu: 'http://evil.test/token' }],
    ['an old iat', { iat: Math.floor(Date.now() / 1000) - 120 }],
  ])('refuses a proof with %s: 400 invalid_dpop_proof', async (_, claims) => {
    const res = await clientCredentials(DP.service, await (await dpopKey()).proof(claims))
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: 'invalid_dpop_proof' })
  })

  it('refuses two DPoP headers', async () => {
    const key = await dpopKey()
    // Node's request sends an array value as repeated header lines.
    const twice = [await key.proof(), await key.proof()] as unknown as string
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/token',
      host: DP.host,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(DP.service.id, DP.service.secret),
        dpop: twice,
      },
      body: 'grant_type=client_credentials',
    })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({
      error: 'invalid_dpop_proof',
      error_description: 'send one DPoP header',
    })
  })

  it('accepts htu under the Host the request was sent to', async () => {
    const key = await dpopKey()
    const proof = await key.proof({ htu: 'http://login.dp.test/token' })
    const res = await clientCredentials(DP.service, proof, 'login.dp.test')
    expect(res.status).toBe(200)
  })

  it('refuses a dpop_bound_access_tokens client without a proof', async () => {
    const res = await clientCredentials(DP.bound)
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: 'invalid_dpop_proof' })
    const key = await dpopKey()
    const bound = await clientCredentials(DP.bound, await key.proof())
    expect(bound.status).toBe(200)
    expect(body(bound).token_type).toBe('DPoP')
  })

  it("binds a public client's refresh tokens; another key or none spends nothing", async () => {
    const key = await dpopKey()
    const first = await redeem(await code(DP.spa), key)
    expect(first.status).toBe(200)
    expect(body(first).token_type).toBe('DPoP')
    const token = body(first).refresh_token

    const other = await refresh(token, await dpopKey())
    expect(other.status).toBe(400)
    expect(other.json).toMatchObject({ error: 'invalid_grant' })
    const none = await refresh(token, undefined)
    expect(none.status).toBe(400)
    expect(none.json).toMatchObject({ error: 'invalid_dpop_proof' })
    const scoped = await withProof(await dpopKey(), {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: DP.spa,
      scope: 'read',
    })
    expect(scoped.json).toMatchObject({ error: 'invalid_grant' })

    // Unspent: the right key still refreshes, and the family stays bound to it.
    const right = await refresh(token, key)
    expect(right.status).toBe(200)
    expect(decodeJwt(body(right).access_token).cnf).toEqual({ jkt: key.jkt })
    expect((await refresh(body(right).refresh_token, await dpopKey())).status).toBe(400)
    expect((await refresh(body(right).refresh_token, key)).status).toBe(200)
  })

  it("leaves a confidential client's refresh tokens unbound", async () => {
    const key = await dpopKey()
    const first = await redeem(await code(DP.web.id, { scope: 'read' }), key, DP.web)
    expect(first.status).toBe(200)
    expect(body(first).token_type).toBe('DPoP')
    const plain = await refresh(body(first).refresh_token, undefined, DP.web)
    expect(plain.status).toBe(200)
    expect(body(plain).token_type).toBe('bearer')
  })

  it('binds a code to dpop_jkt: no proof or another key leaves it unspent', async () => {
    const key = await dpopKey()
    const grant = await code(DP.spa, { dpop_jkt: key.jkt })
    const none = await redeem(grant, undefined)
    expect(none.status).toBe(400)
    expect(none.json).toMatchObject({ error: 'invalid_dpop_proof' })
    const other = await redeem(grant, await dpopKey())
    expect(other.status).toBe(400)
    expect(other.json).toMatchObject({ error: 'invalid_grant' })
    const right = await redeem(grant, key)
    expect(right.status).toBe(200)
    expect(decodeJwt(body(right).access_token).cnf).toEqual({ jkt: key.jkt })
  })

  it('refuses a malformed dpop_jkt at /authorize', async () => {
    const res = await send(issuer.url, {
      path: `/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: DP.spa,
        redirect_uri: DP.redirectUri,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        dpop_jkt: 'not-a-thumbprint',
      }).toString()}`,
      host: DP.host,
    })
    expect(res.status).toBe(303)
    expect(new URL(res.headers.location!).searchParams.get('error')).toBe('invalid_request')
  })

  it('introspects a bound token as token_type DPoP with its cnf', async () => {
    const key = await dpopKey()
    const token = body(await clientCredentials(DP.service, await key.proof())).access_token
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/introspect',
      host: DP.host,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(DP.service.id, DP.service.secret),
      },
      body: new URLSearchParams({ token }).toString(),
    })
    expect(res.json).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } })
  })

  describe('/userinfo', () => {
    async function boundToken(key: DpopKey): Promise<string> {
      return body(await redeem(await code(DP.spa), key)).access_token
    }

    function userinfo(headers: Record<string, string>): Promise<HttpResponse> {
      return send(issuer.url, { path: '/userinfo', host: DP.host, headers })
    }

    const userinfoProof = (key: DpopKey, token: string) =>
      key.proof({ htm: 'GET', htu: `${DP.issuer}/userinfo`, accessToken: token })

    it('answers a bound token sent as DPoP with a proof of its key', async () => {
      const key = await dpopKey()
      const token = await boundToken(key)
      const res = await userinfo({
        authorization: `DPoP ${token}`,
        dpop: await userinfoProof(key, token),
      })
      expect(res.status).toBe(200)
      expect(res.json).toMatchObject({ sub: 'user-alice' })
    })

    it('refuses an unbound token sent as DPoP', async () => {
      const token = body(await redeem(await code(DP.spa), undefined)).access_token
      const key = await dpopKey()
      const res = await userinfo({
        authorization: `DPoP ${token}`,
        dpop: await userinfoProof(key, token),
      })
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^DPoP .*error="invalid_token"/)
      const bearer = await userinfo({ authorization: `Bearer ${token}` })
      expect(bearer.status).toBe(200)
    })

    it('refuses a bound token sent as Bearer: 401 with a DPoP challenge', async () => {
      const key = await dpopKey()
      const token = await boundToken(key)
      const res = await userinfo({ authorization: `Bearer ${token}` })
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^DPoP .*error="invalid_token"/)
      expect(res.headers['www-authenticate']).toMatch(/algs="ES256 RS256 PS256 EdDSA"/)
    })

    it.each([
      ['no proof', () => Promise.resolve(undefined)],
      [
        'a proof of another key',
        async (_: DpopKey, token: string) => userinfoProof(await dpopKey(), token),
      ],
      [
        'a proof without ath',
        async (key: DpopKey) => key.proof({ htm: 'GET', htu: `${DP.issuer}/userinfo` }),
      ],
      [
        'a proof for /token',
        async (key: DpopKey, token: string) => key.proof({ accessToken: token }),
      ],
    ])('refuses %s: 401 invalid_dpop_proof', async (_, makeProof) => {
      const key = await dpopKey()
      const token = await boundToken(key)
      const proof = await makeProof(key, token)
      const res = await userinfo({
        authorization: `DPoP ${token}`,
        ...(proof === undefined ? {} : { dpop: proof }),
      })
      expect(res.status).toBe(401)
      expect(res.json).toMatchObject({ error: 'invalid_dpop_proof' })
      expect(res.headers['www-authenticate']).toMatch(/^DPoP .*error="invalid_dpop_proof"/)
    })
  })

  it('lists dpop_signing_alg_values_supported in both metadata documents', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
    ]) {
      const res = await send(issuer.url, { path, host: DP.host })
      expect(res.json).toMatchObject({
        dpop_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
      })
    }
  })

  describe('server nonces (dpop_nonce: true)', () => {
    const nonceProof = (key: DpopKey, nonce?: string) =>
      key.proof({ htu: `${DPN.issuer}/token`, ...(nonce === undefined ? {} : { nonce }) })

    it('asks for the nonce with use_dpop_nonce, then accepts it and sends the next', async () => {
      const key = await dpopKey()
      const first = await clientCredentials(DPN.service, await nonceProof(key), DPN.host)
      expect(first.status).toBe(400)
      expect(first.json).toMatchObject({ error: 'use_dpop_nonce' })
      const nonce = String(first.headers['dpop-nonce'])
      expect(nonce).toMatch(/^[\w-]{43}$/)
      const second = await clientCredentials(DPN.service, await nonceProof(key, nonce), DPN.host)
      expect(second.status).toBe(200)
      expect(body(second).token_type).toBe('DPoP')
      expect(second.headers['dpop-nonce']).toBe(nonce)
    })

    it('refuses a made-up nonce, and sends no DPoP-Nonce at a tenant without nonces', async () => {
      const key = await dpopKey()
      const res = await clientCredentials(DPN.service, await nonceProof(key, 'made-up'), DPN.host)
      expect(res.json).toMatchObject({ error: 'use_dpop_nonce' })
      const plain = await clientCredentials(DP.service, await key.proof())
      expect(plain.status).toBe(200)
      expect(plain.headers).not.toHaveProperty('dpop-nonce')
    })
  })
})
