import { decodeJwt, decodeProtectedHeader } from 'jose'
import * as client from 'openid-client'
import { describe, expect, it } from 'vitest'
import { loopbackFetch } from '../support/fetch.js'
import { send } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import {
  ALICE,
  atHash,
  CookieJar,
  OIDC_HS,
  OIDC_RS,
  redirectOf,
  setCookie,
  signInWithForm,
  visit,
} from '../support/oidc.js'
import type { OidcClient } from '../support/oidc.js'

const SESSION_TTL_SECONDS = 8 * 3600

/** Claims an ID token must never carry: they would make it look like an access token. */
const ACCESS_TOKEN_ONLY = ['scope', 'client_id', 'jti']

describe.each([OIDC_RS, OIDC_HS])('OpenID Connect with openid-client, tenant $name', (tenant) => {
  const issuer = useIssuer({ config: 'oidc' })

  /** openid-client as the client's relying party, strict: it checks ID token signatures too. */
  function relyingParty(app: OidcClient): Promise<client.Configuration> {
    return client.discovery(
      new URL(tenant.issuer),
      app.id,
      app.secret,
      app.secret === undefined ? client.None() : client.ClientSecretPost(app.secret),
      {
        [client.customFetch]: loopbackFetch(issuer.url),
        // The fixture's issuer URLs are http (dev mode); production ones are https.
        execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
      },
    )
  }

  interface Started {
    url: URL
    verifier: string
    nonce: string
    state: string
  }

  async function authorizationUrl(
    config: client.Configuration,
    app: OidcClient,
    extra: Record<string, string> = {},
  ): Promise<Started> {
    const verifier = client.randomPKCECodeVerifier()
    const nonce = client.randomNonce()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: app.redirectUri,
      scope: 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state,
      ...extra,
    })
    return { url, verifier, nonce, state }
  }

  function redeem(
    config: client.Configuration,
    started: Started,
    callback: URL,
  ): ReturnType<typeof client.authorizationCodeGrant> {
    return client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: started.verifier,
      expectedNonce: started.nonce,
      expectedState: started.state,
      idTokenExpected: true,
    })
  }

  /** Signs alice in to `app` with the form in a fresh browser; the jar holds her session. */
  async function signIn(app: OidcClient, jar = new CookieJar()) {
    const config = await relyingParty(app)
    const started = await authorizationUrl(config, app)
    const login = await signInWithForm(issuer.url, started.url, jar)
    const tokens = await redeem(config, started, redirectOf(login))
    return { config, jar, tokens, claims: tokens.claims()!, login }
  }

  it('publishes a discovery document that openid-client takes', async () => {
    const config = await relyingParty(tenant.a)
    const metadata = config.serverMetadata()
    expect(metadata).toMatchObject({
      issuer: tenant.issuer,
      authorization_endpoint: `${tenant.issuer}/authorize`,
      token_endpoint: `${tenant.issuer}/token`,
      jwks_uri: `${tenant.issuer}/.well-known/jwks.json`,
      userinfo_endpoint: `${tenant.issuer}/userinfo`,
      end_session_endpoint: `${tenant.issuer}/logout`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    })
    expect(metadata.scopes_supported).toEqual(['email', 'openid', 'profile', 'read'])
    expect(metadata.claims_supported).toEqual(
      expect.arrayContaining([
        'sub',
        'iss',
        'aud',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'azp',
        'at_hash',
        'sid',
        ...Object.keys(ALICE.profile),
        ...Object.keys(ALICE.email),
      ]),
    )
    expect(metadata.claims_supported).not.toContain('department')

    const raw = await send(issuer.url, {
      path: '/.well-known/openid-configuration',
      host: tenant.host,
    })
    expect(raw.headers['cache-control']).toBe('public, max-age=300')
    // The RFC 8414 document names the same two endpoints.
    const oauth = await send(issuer.url, {
      path: '/.well-known/oauth-authorization-server',
      host: tenant.host,
    })
    expect(oauth.json).toMatchObject({
      userinfo_endpoint: `${tenant.issuer}/userinfo`,
      end_session_endpoint: `${tenant.issuer}/logout`,
    })
  })

  it('signs in with code, PKCE and nonce; openid-client validates the ID token', async () => {
    const config = await relyingParty(tenant.a)
    const started = await authorizationUrl(config, tenant.a, { login_hint: 'alice' })
    const jar = new CookieJar()

    const page = await visit(issuer.url, started.url, jar)
    expect(page.status).toBe(200)
    // login_hint pre-fills the username field.
    const username = /<input[^>]*name="username"[^>]*>/.exec(page.text)?.[0]
    expect(username).toContain('value="alice"')

    const login = await signInWithForm(issuer.url, started.url, jar)
    const cookie = setCookie(login, 'tessera_session')
    expect(cookie).toBeDefined()
    const attributes = cookie!.split(';').map((part) => part.trim().toLowerCase())
    expect(attributes).toEqual(expect.arrayContaining(['path=/', 'httponly', 'samesite=lax']))
    // The session's whole life, less the moment since it began.
    const maxAge = Number(/^max-age=(\d+)$/m.exec(attributes.join('\n'))?.[1])
    expect(maxAge).toBeGreaterThan(SESSION_TTL_SECONDS - 5)
    expect(maxAge).toBeLessThanOrEqual(SESSION_TTL_SECONDS)
    // dev over http: not Secure.
    expect(attributes).not.toContain('secure')
    expect(jar.get('tessera_session')).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const callback = redirectOf(login)
    expect(callback.searchParams.get('iss')).toBe(tenant.issuer)
    const before = Math.floor(Date.now() / 1000)
    const tokens = await redeem(config, started, callback)
    expect(tokens.id_token).toBeDefined()

    // The signature was checked against the JWKS (enableNonRepudiationChecks); the header:
    const header = decodeProtectedHeader(tokens.id_token!)
    expect(header).toMatchObject({ alg: 'RS256', typ: 'JWT' })
    const jwks = await send(issuer.url, { path: '/.well-known/jwks.json', host: tenant.host })
    const kids = (jwks.json as { keys: { kid: string }[] }).keys.map((key) => key.kid)
    expect(kids).toContain(header.kid)

    const claims = tokens.claims()!
    expect(claims).toMatchObject({
      iss: tenant.issuer,
      sub: ALICE.sub,
      aud: tenant.a.id,
      azp: tenant.a.id,
      nonce: started.nonce,
      at_hash: atHash(tokens.access_token),
      ...ALICE.profile,
      ...ALICE.email,
    })
    expect(claims.exp - claims.iat).toBe(tokens.expires_in)
    expect(Number.isInteger(claims.auth_time)).toBe(true)
    expect(Math.abs(claims.auth_time! - before)).toBeLessThanOrEqual(5)
    expect(typeof claims.sid).toBe('string')
    expect(claims).not.toHaveProperty('department')
    for (const name of ACCESS_TOKEN_ONLY) expect(claims).not.toHaveProperty(name)
    // The access token is about the same user.
    expect(decodeJwt(tokens.access_token).sub).toBe(claims.sub)

    const userinfo = await client.fetchUserInfo(config, tokens.access_token, ALICE.sub)
    expect(userinfo).toEqual({ sub: ALICE.sub, ...ALICE.profile, ...ALICE.email })

    // A refresh brings a new ID token for the same sign-in, without the nonce.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
    const again = refreshed.claims()!
    expect(again).toMatchObject({
      iss: tenant.issuer,
      sub: claims.sub,
      aud: tenant.a.id,
      azp: tenant.a.id,
      auth_time: claims.auth_time,
      sid: claims.sid,
      at_hash: atHash(refreshed.access_token),
    })
    expect(again).not.toHaveProperty('nonce')
    expect(again).not.toHaveProperty('department')
  })

  it('releases only the claims of the scopes asked for, and only those the provider gave', async () => {
    const config = await relyingParty(tenant.b)
    const jar = new CookieJar()

    const emailOnly = await authorizationUrl(config, tenant.b, { scope: 'openid email' })
    const alice = await redeem(
      config,
      emailOnly,
      redirectOf(await signInWithForm(issuer.url, emailOnly.url, jar)),
    )
    const aliceClaims = alice.claims()!
    expect(aliceClaims).toMatchObject({ sub: ALICE.sub, aud: tenant.b.id, ...ALICE.email })
    for (const name of Object.keys(ALICE.profile)) expect(aliceClaims).not.toHaveProperty(name)
    await expect(client.fetchUserInfo(config, alice.access_token, ALICE.sub)).resolves.toEqual({
      sub: ALICE.sub,
      ...ALICE.email,
    })

    // bob's provider answer has a name and no email: no email claims, and never department.
    const all = await authorizationUrl(config, tenant.b)
    const bob = await redeem(
      config,
      all,
      redirectOf(await signInWithForm(issuer.url, all.url, new CookieJar(), 'bob')),
    )
    const bobClaims = bob.claims()!
    expect(bobClaims).toMatchObject({ sub: 'user-bob', name: 'Bob Builder' })
    for (const name of ['email', 'email_verified', 'department', 'given_name']) {
      expect(bobClaims).not.toHaveProperty(name)
    }
    await expect(client.fetchUserInfo(config, bob.access_token, 'user-bob')).resolves.toEqual({
      sub: 'user-bob',
      name: 'Bob Builder',
    })
  })

  it('prompt=none: a code without the form with a session, login_required without one', async () => {
    const first = await signIn(tenant.a)

    const silent = await authorizationUrl(first.config, tenant.a, { prompt: 'none' })
    const answer = await visit(issuer.url, silent.url, first.jar)
    expect(answer.status).toBe(303)
    expect(answer.headers['cache-control']).toBe('no-store')
    const tokens = await redeem(first.config, silent, redirectOf(answer))
    expect(tokens.claims()).toMatchObject({
      sub: ALICE.sub,
      nonce: silent.nonce,
      auth_time: first.claims.auth_time,
      sid: first.claims.sid,
    })

    const stranger = await authorizationUrl(first.config, tenant.a, { prompt: 'none' })
    const refused = await visit(issuer.url, stranger.url, new CookieJar())
    const callback = redirectOf(refused)
    expect(callback.searchParams.get('state')).toBe(stranger.state)
    expect(callback.searchParams.get('iss')).toBe(tenant.issuer)
    await expect(redeem(first.config, stranger, callback)).rejects.toMatchObject({
      error: 'login_required',
    })
  })

  it('max_age=0 and prompt=login show the form again despite the session', async () => {
    const first = await signIn(tenant.a)
    const extras: Record<string, string>[] = [{ max_age: '0' }, { prompt: 'login' }]
    for (const extra of extras) {
      const started = await authorizationUrl(first.config, tenant.a, extra)
      const page = await visit(issuer.url, started.url, first.jar)
      expect(page.status).toBe(200)
      expect(page.text).toContain('name="csrf_token"')
    }

    // Signing in again through max_age=0 gives a fresh auth_time that the client can check.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const started = await authorizationUrl(first.config, tenant.a, { max_age: '0' })
    const login = await signInWithForm(issuer.url, started.url, first.jar)
    const tokens = await client.authorizationCodeGrant(first.config, redirectOf(login), {
      pkceCodeVerifier: started.verifier,
      expectedNonce: started.nonce,
      expectedState: started.state,
      maxAge: 5,
    })
    expect(tokens.claims()!.auth_time).toBeGreaterThan(first.claims.auth_time!)
  })

  it('logs out to a registered URI: the session ends, its refresh tokens too', async () => {
    const { config, jar, tokens } = await signIn(tenant.a)
    const sessionCookie = jar.get('tessera_session')!
    const target = tenant.a.postLogoutRedirectUris[1]!

    const logout = await visit(
      issuer.url,
      client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token!,
        post_logout_redirect_uri: target,
        state: 'bye state',
      }),
      jar,
    )
    expect(logout.status).toBe(303)
    // The URI's own query is kept; state is added.
    const back = new URL(logout.headers.location!)
    expect(logout.headers.location!.startsWith(`${target}&state=`)).toBe(true)
    expect([...back.searchParams]).toEqual([
      ['from', 'tessera'],
      ['state', 'bye state'],
    ])
    expect(logout.headers['cache-control']).toBe('no-store')
    expect(setCookie(logout, 'tessera_session')).toMatch(/max-age=0/i)
    expect(jar.get('tessera_session')).toBeUndefined()

    // Even a browser that kept the old cookie has no session any more.
    jar.set('tessera_session', sessionCookie)
    const silent = await authorizationUrl(config, tenant.a, { prompt: 'none' })
    const refused = redirectOf(await visit(issuer.url, silent.url, jar))
    expect(refused.searchParams.get('error')).toBe('login_required')

    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    })
  })

  it('logs out by POST without a redirect URI: the signed-out page', async () => {
    const { config, jar, tokens } = await signIn(tenant.b)
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/logout',
      host: tenant.host,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: jar.header()!,
      },
      body: new URLSearchParams({ client_id: tenant.b.id }).toString(),
    })
    jar.take(res)
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['content-security-policy']).toContain("default-src 'none'")
    expect(res.text).toContain('You are signed out')
    expect(jar.get('tessera_session')).toBeUndefined()

    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    })
    // Signing out again, with no session left, answers the same page.
    const again = await visit(issuer.url, `${tenant.issuer}/logout`, jar)
    expect(again.status).toBe(200)
    expect(again.text).toContain('You are signed out')
  })

  it('refuses an unregistered post-logout URI with a page and keeps the session', async () => {
    const { config, jar, tokens } = await signIn(tenant.a)

    const logout = await visit(
      issuer.url,
      client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token!,
        post_logout_redirect_uri: 'http://localhost:9000/a/elsewhere',
        state: 'x',
      }),
      jar,
    )
    expect(logout.status).toBe(400)
    expect(logout.headers['content-type']).toMatch(/^text\/html/)
    expect(logout.text).toContain('The post_logout_redirect_uri is not registered for this client.')
    expect(logout.headers.location).toBeUndefined()
    expect(setCookie(logout, 'tessera_session')).toBeUndefined()

    const silent = await authorizationUrl(config, tenant.a, { prompt: 'none' })
    const still = redirectOf(await visit(issuer.url, silent.url, jar))
    expect(still.searchParams.get('code')).not.toBeNull()
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).resolves.toMatchObject({
      token_type: 'bearer',
    })
  })
})
