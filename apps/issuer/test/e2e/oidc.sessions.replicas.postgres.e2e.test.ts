/**
 * The single sign-on session across two replicas on one PostgreSQL: a browser signed in at one
 * is signed in at the other, and a logout or the session's end at one holds at both.
 */
import { join } from 'node:path'
import { createTestDatabase } from '@tessera/test-support'
import type { TestDatabase } from '@tessera/test-support'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import { FIXTURES, startIssuer } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { pkce } from '../support/oauth.js'
import {
  CookieJar,
  OIDC_RS,
  openIdAuthorizeUrl,
  redeemCode,
  redirectOf,
  setCookie,
  signInOpenId,
  silentAuthorize,
  visit,
} from '../support/oidc.js'

const T = OIDC_RS
const HOUR = 3_600_000

describe('OpenID sessions on two replicas sharing one PostgreSQL', { timeout: 120_000 }, () => {
  let database: TestDatabase
  let one: InProcessIssuer
  let two: InProcessIssuer
  // Both replicas read the same clock, which a test may move forward.
  let offset = 0
  const clock = () => Date.now() + offset

  beforeAll(async () => {
    database = await createTestDatabase()
    const options = {
      databaseUrl: database.url,
      config: join(FIXTURES, 'oidc'),
      clock,
      vars: { SESSION_TTL_HOURS: '2' },
    }
    one = await startIssuer(options)
    two = await startIssuer(options)
  })
  afterAll(async () => {
    await one?.close()
    await two?.close()
    await database?.drop()
  })

  it('signs in at one replica, gets codes without the form at the other', async () => {
    const { jar, tokens } = await signInOpenId(one.url, T, T.a, { params: { nonce: 'n-1' } })
    const first = decodeJwt(tokens.id_token!)

    const { verifier, challenge } = pkce()
    const silent = await visit(
      two.url,
      openIdAuthorizeUrl(T, T.b, challenge, { prompt: 'none', nonce: 'n-2' }),
      jar,
    )
    const code = redirectOf(silent).searchParams.get('code')!
    const atB = await redeemCode(two.url, T, T.b, code, verifier)
    expect(decodeJwt(atB.id_token!)).toMatchObject({
      sub: first.sub,
      sid: first.sid,
      auth_time: first.auth_time,
      aud: T.b.id,
      nonce: 'n-2',
    })
  })

  it('logs out at one replica: the other has no session either, nor its refresh tokens', async () => {
    const { jar, tokens } = await signInOpenId(one.url, T, T.a, { params: { nonce: 'n-3' } })
    const kept = jar.get('tessera_session')!
    const url = new URL(`${T.issuer}/logout`)
    url.searchParams.set('id_token_hint', tokens.id_token!)
    url.searchParams.set('post_logout_redirect_uri', T.a.postLogoutRedirectUris[0]!)
    const logout = await visit(two.url, url, jar)
    expect(redirectOf(logout).href).toBe(T.a.postLogoutRedirectUris[0]!)

    jar.set('tessera_session', kept)
    await expect(silentAuthorize(one.url, T, T.a, jar)).resolves.toMatchObject({
      code: null,
      error: 'login_required',
    })
    const refreshed = await postForm(one.url, T.host, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: T.a.id,
      client_secret: T.a.secret!,
    })
    expect(refreshed.status).toBe(400)
    expect(refreshed.json).toMatchObject({ error: 'invalid_grant' })
  })

  it('ends the session SESSION_TTL_HOURS after the sign-in, and clears the cookie', async () => {
    const { jar, tokens } = await signInOpenId(one.url, T, T.a, { params: { nonce: 'n-4' } })
    offset += 1.9 * HOUR
    await expect(silentAuthorize(two.url, T, T.b, jar)).resolves.toMatchObject({ error: null })

    offset += 0.2 * HOUR
    const kept = jar.get('tessera_session')!
    const url = openIdAuthorizeUrl(T, T.a, pkce().challenge, { prompt: 'none', nonce: 'n-5' })
    const expired = await visit(two.url, url, jar)
    expect(redirectOf(expired).searchParams.get('error')).toBe('login_required')
    expect(setCookie(expired, 'tessera_session')).toMatch(/max-age=0/i)
    expect(jar.get('tessera_session')).toBeUndefined()

    // The same cookie at the other replica: expired there too.
    const again = new CookieJar()
    again.set('tessera_session', kept)
    await expect(silentAuthorize(one.url, T, T.a, again)).resolves.toMatchObject({
      error: 'login_required',
    })

    // The ID token has expired by now (2 h, as the access token): still a good id_token_hint.
    expect(decodeJwt(tokens.id_token!).exp! * 1000).toBeLessThan(clock())
    const lateLogout = new URL(`${T.issuer}/logout`)
    lateLogout.searchParams.set('id_token_hint', tokens.id_token!)
    lateLogout.searchParams.set('post_logout_redirect_uri', T.a.postLogoutRedirectUris[0]!)
    lateLogout.searchParams.set('state', 'late')
    const logout = await visit(one.url, lateLogout, again)
    expect(redirectOf(logout).searchParams.get('state')).toBe('late')
  })
})
