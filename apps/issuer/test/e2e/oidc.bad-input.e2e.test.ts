import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { postForm, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { pkce } from '../support/oauth.js'
import {
  CookieJar,
  OIDC_HS,
  OIDC_RS,
  openIdAuthorizeUrl,
  redirectOf,
  setCookie,
  signInOpenId,
  signInWithForm,
  silentAuthorize,
  visit,
} from '../support/oidc.js'
import type { OidcClient, OidcTenant } from '../support/oidc.js'

const T = OIDC_RS

describe('OpenID Connect: bad input gets a clear error and changes nothing', () => {
  const issuer = useIssuer({ config: 'oidc' })

  /** A signed-in browser at client A of `tenant`, with its tokens. */
  function signedIn(tenant: OidcTenant = T) {
    return signInOpenId(issuer.url, tenant, tenant.a, { params: { nonce: 'n-0' } })
  }

  /** The session of `jar` is still live and its refresh token still works. */
  async function expectUnchanged(jar: CookieJar, refreshToken: string, tenant = T) {
    await expect(silentAuthorize(issuer.url, tenant, tenant.a, jar)).resolves.toMatchObject({
      error: null,
    })
    const res = await postForm(issuer.url, tenant.host, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: tenant.a.id,
      client_secret: tenant.a.secret!,
    })
    expect(res.status, res.text).toBe(200)
    return (res.json as { refresh_token: string }).refresh_token
  }

  function logout(jar: CookieJar, params: Record<string, string>, tenant = T) {
    const url = new URL(`${tenant.issuer}/logout`)
    for (const [name, value] of Object.entries(params)) url.searchParams.append(name, value)
    return visit(issuer.url, url, jar)
  }

  function expectErrorPage(res: HttpResponse, message: string) {
    expect(res.status).toBe(400)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.location).toBeUndefined()
    expect(setCookie(res, 'tessera_session')).toBeUndefined()
    expect(res.text).toContain(message)
  }

  describe('logout', () => {
    it('refuses a post-logout URI without a client to check it against', async () => {
      const { jar, tokens } = await signedIn()
      const res = await logout(jar, {
        post_logout_redirect_uri: T.a.postLogoutRedirectUris[0]!,
      })
      expectErrorPage(res, 'post_logout_redirect_uri needs id_token_hint or client_id')
      await expectUnchanged(jar, tokens.refresh_token!)
    })

    it('refuses a post-logout URI that the client did not register (exact match)', async () => {
      const { jar, tokens } = await signedIn()
      let refresh = tokens.refresh_token!
      const cases: Record<string, string>[] = [
        // Another client's URI.
        { client_id: T.a.id, post_logout_redirect_uri: T.b.postLogoutRedirectUris[0]! },
        // A registered one with something added: no prefix or pattern matching.
        {
          id_token_hint: tokens.id_token!,
          post_logout_redirect_uri: `${T.a.postLogoutRedirectUris[0]!}/`,
        },
        { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.test/' },
      ]
      for (const params of cases) {
        expectErrorPage(
          await logout(jar, params),
          'The post_logout_redirect_uri is not registered for this client.',
        )
        refresh = await expectUnchanged(jar, refresh)
      }
    })

    it('refuses an id_token_hint of the other tenant, or not an ID token at all', async () => {
      const { jar, tokens } = await signedIn()
      const other = await signInOpenId(issuer.url, OIDC_HS, OIDC_HS.a, {
        params: { nonce: 'n-1' },
      })
      for (const hint of [other.tokens.id_token!, tokens.access_token, 'not.a.jwt']) {
        expectErrorPage(
          await logout(jar, { id_token_hint: hint }),
          'The id_token_hint was not issued by this server.',
        )
      }
      await expectUnchanged(jar, tokens.refresh_token!)
    })

    it('refuses a client_id that is not the audience of the hint, and repeated parameters', async () => {
      const { jar, tokens } = await signedIn()
      const mismatch = await logout(jar, {
        id_token_hint: tokens.id_token!,
        client_id: T.b.id,
        post_logout_redirect_uri: T.b.postLogoutRedirectUris[0]!,
      })
      expect(mismatch.status).toBe(400)
      expect(setCookie(mismatch, 'tessera_session')).toBeUndefined()

      const url = new URL(`${T.issuer}/logout`)
      url.searchParams.append('state', 'a')
      url.searchParams.append('state', 'b')
      const twice = await visit(issuer.url, url, jar)
      expect(twice.status).toBe(400)
      expect(setCookie(twice, 'tessera_session')).toBeUndefined()
      await expectUnchanged(jar, tokens.refresh_token!)
    })
  })

  describe('authorize', () => {
    async function authorizeError(
      app: OidcClient,
      params: Record<string, string>,
      jar = new CookieJar(),
    ): Promise<URL> {
      const res = await visit(
        issuer.url,
        openIdAuthorizeUrl(T, app, pkce().challenge, { state: 'bad-state', ...params }),
        jar,
      )
      expect(setCookie(res, 'tessera_session')).toBeUndefined()
      const location = redirectOf(res)
      expect(location.origin + location.pathname).toBe(app.redirectUri)
      expect(location.searchParams.get('state')).toBe('bad-state')
      expect(location.searchParams.get('iss')).toBe(T.issuer)
      expect(location.searchParams.get('code')).toBeNull()
      return location
    }

    it('refuses a nonce over 1,024 characters, counted in code points', async () => {
      const { jar, tokens } = await signedIn()
      const location = await authorizeError(T.a, { nonce: 'n'.repeat(1025) }, jar)
      expect(location.searchParams.get('error')).toBe('invalid_request')
      expect(location.searchParams.get('error_description')).toBe(
        'nonce must be at most 1024 characters',
      )
      // 1,024 characters of two UTF-16 units each are still 1,024 characters.
      const page = await visit(
        issuer.url,
        openIdAuthorizeUrl(T, T.a, pkce().challenge, { nonce: '😀'.repeat(1024), prompt: 'login' }),
        jar,
      )
      expect(page.status).toBe(200)
      await expectUnchanged(jar, tokens.refresh_token!)
    })

    it('refuses openid for a client that does not list it: invalid_scope', async () => {
      const location = await authorizeError(T.plain, { scope: 'openid read', nonce: 'n' })
      expect(location.searchParams.get('error')).toBe('invalid_scope')
    })

    it('refuses bad prompt and max_age values', async () => {
      const { jar, tokens } = await signedIn()
      const cases: [Record<string, string>, string | undefined][] = [
        [{ prompt: 'sometimes', nonce: 'n' }, 'unsupported prompt value: sometimes'],
        [{ prompt: 'none login', nonce: 'n' }, undefined],
        [{ prompt: 'none' }, 'nonce is required with prompt=none'],
        [{ max_age: '-1', nonce: 'n' }, undefined],
        [{ max_age: '1.5', nonce: 'n' }, undefined],
        [{ max_age: '12345678901', nonce: 'n' }, undefined],
      ]
      for (const [params, description] of cases) {
        const location = await authorizeError(T.a, params, jar)
        expect(location.searchParams.get('error'), JSON.stringify(params)).toBe('invalid_request')
        if (description !== undefined) {
          expect(location.searchParams.get('error_description')).toBe(description)
        }
      }
      await expectUnchanged(jar, tokens.refresh_token!)
    })
  })

  describe('what is accepted and ignored', () => {
    it('ignores a login_hint over 256 characters, and prompt=consent or select_account', async () => {
      const long = await visit(
        issuer.url,
        openIdAuthorizeUrl(T, T.a, pkce().challenge, { nonce: 'n', login_hint: 'a'.repeat(257) }),
        new CookieJar(),
      )
      expect(long.status).toBe(200)
      expect(long.text).not.toContain('a'.repeat(257))
      const hinted = await visit(
        issuer.url,
        openIdAuthorizeUrl(T, T.a, pkce().challenge, { nonce: 'n', login_hint: 'a'.repeat(256) }),
        new CookieJar(),
      )
      expect(hinted.text).toContain(`value="${'a'.repeat(256)}"`)

      const { jar } = await signedIn()
      for (const prompt of ['consent', 'select_account', 'consent select_account']) {
        const res = await visit(
          issuer.url,
          openIdAuthorizeUrl(T, T.b, pkce().challenge, { nonce: 'n', prompt }),
          jar,
        )
        expect(redirectOf(res).searchParams.get('code'), prompt).not.toBeNull()
      }
    })
  })

  describe('/userinfo', () => {
    function userinfo(tenant: OidcTenant, headers: Record<string, string>, body?: string) {
      return send(issuer.url, {
        method: body === undefined ? 'GET' : 'POST',
        path: '/userinfo',
        host: tenant.host,
        headers:
          body === undefined
            ? headers
            : { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      })
    }

    function expectInvalidToken(res: HttpResponse) {
      expect(res.status).toBe(401)
      const challenge = res.headers['www-authenticate'] ?? ''
      expect(challenge).toMatch(new RegExp(`^Bearer realm="${T.issuer}"`))
      expect(challenge).toContain('error="invalid_token"')
      expect(challenge).toContain('error_description="')
      expect(res.json).toMatchObject({ error: 'invalid_token' })
    }

    it('answers the signed-in user to a good token, by header and by form body', async () => {
      const { tokens } = await signedIn()
      const byHeader = await userinfo(T, { authorization: `Bearer ${tokens.access_token}` })
      expect(byHeader.status).toBe(200)
      expect(byHeader.headers['cache-control']).toBe('no-store')
      expect(byHeader.json).toMatchObject({ sub: 'user-alice' })
      const byBody = await userinfo(
        T,
        {},
        new URLSearchParams({ access_token: tokens.access_token }).toString(),
      )
      expect(byBody.status).toBe(200)
      expect(byBody.json).toEqual(byHeader.json)
      const both = await userinfo(
        T,
        { authorization: `Bearer ${tokens.access_token}` },
        new URLSearchParams({ access_token: tokens.access_token }).toString(),
      )
      expect(both.status).toBe(400)
      expect(both.json).toMatchObject({ error: 'invalid_request' })
    })

    it('asks for a token, without an error code, when there is none', async () => {
      const res = await userinfo(T, {})
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toBe(`Bearer realm="${T.issuer}"`)
    })

    it('refuses an ID token, a token of the other tenant, and a garbled one', async () => {
      const { tokens } = await signedIn()
      const other = await signedIn(OIDC_HS)
      expectInvalidToken(await userinfo(T, { authorization: `Bearer ${tokens.id_token!}` }))
      expectInvalidToken(
        await userinfo(T, { authorization: `Bearer ${other.tokens.access_token}` }),
      )
      expectInvalidToken(await userinfo(T, { authorization: 'Bearer abc.def.ghi' }))
    })

    it('answers only GET, HEAD, POST and OPTIONS', async () => {
      for (const method of ['PUT', 'DELETE', 'PATCH']) {
        const res = await send(issuer.url, { method, path: '/userinfo', host: T.host })
        expect(res.status, method).toBe(405)
      }
    })

    it('refuses a token without openid: 403 insufficient_scope', async () => {
      const { verifier, challenge } = pkce()
      const login = await signInOpenIdLess(challenge)
      const res = await postForm(issuer.url, T.host, {
        grant_type: 'authorization_code',
        code: login,
        redirect_uri: T.plain.redirectUri,
        code_verifier: verifier,
        client_id: T.plain.id,
      })
      expect(res.status).toBe(200)
      const body = res.json as { access_token: string; id_token?: string; scope: string }
      expect(body.scope).toBe('read')
      expect(body).not.toHaveProperty('id_token')
      const refused = await userinfo(T, { authorization: `Bearer ${body.access_token}` })
      expect(refused.status).toBe(403)
      const header = refused.headers['www-authenticate'] ?? ''
      expect(header).toContain('error="insufficient_scope"')
      expect(header).toContain('scope="openid"')
    })

    /** Client "plain" signs alice in with scope read: no openid, so no session cookie either. */
    async function signInOpenIdLess(challenge: string): Promise<string> {
      const url = openIdAuthorizeUrl(T, T.plain, challenge, {
        scope: 'read',
        // Both mean nothing without openid: the login form, as for any OAuth request.
        prompt: 'none',
        nonce: 'ignored without openid',
      })
      const login = await signInWithForm(issuer.url, url, new CookieJar())
      expect(setCookie(login, 'tessera_session')).toBeUndefined()
      return redirectOf(login).searchParams.get('code')!
    }
  })
})

describe('guessed session cookies are throttled like passwords', () => {
  const issuer = useIssuer({ config: 'oidc', vars: { PASSWORD_MAX_FAILURES_PER_ADDRESS: '3' } })

  it('clears each unknown cookie and counts it for the address; past the limit no cookie counts', async () => {
    const { jar } = await signInOpenId(issuer.url, T, T.a, { params: { nonce: 'n' } })
    await expect(silentAuthorize(issuer.url, T, T.a, jar)).resolves.toMatchObject({ error: null })

    for (let i = 0; i < 3; i++) {
      const guess = new CookieJar()
      guess.set('tessera_session', randomBytes(32).toString('base64url'))
      const res = await visit(
        issuer.url,
        openIdAuthorizeUrl(T, T.a, pkce().challenge, { nonce: 'n' }),
        guess,
      )
      expect(res.status).toBe(200)
      expect(setCookie(res, 'tessera_session')).toMatch(/max-age=0/i)
    }

    // The address has used its allowance: even the live session is not looked up...
    await expect(silentAuthorize(issuer.url, T, T.a, jar)).resolves.toMatchObject({
      code: null,
      error: 'login_required',
    })
    // ...and the right password is refused as throttled.
    const url = openIdAuthorizeUrl(T, T.a, pkce().challenge, { nonce: 'n' })
    const fresh = new CookieJar()
    const page = await visit(issuer.url, url, fresh)
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!
    const login = await send(issuer.url, {
      method: 'POST',
      path: '/authorize',
      host: T.host,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: fresh.header()! },
      body: new URLSearchParams({
        csrf_token: csrf,
        username: 'alice',
        password: 'alice-password',
      }).toString(),
    })
    expect(login.status).toBe(429)
    expect(login.headers['retry-after']).toBeDefined()
  })
})
