import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { send } from '../support/http.js'
import { HS, startIssuer, tempDir } from '../support/issuer.js'
import type { RunningIssuer } from '../support/issuer.js'
import {
  authorizePath,
  openLogin,
  pkce,
  readLoginPage,
  SPA,
  submitLogin,
} from '../support/oauth.js'

describe('GET /authorize and the login page', () => {
  let issuer: RunningIssuer
  let tmp: ReturnType<typeof tempDir>
  const { challenge } = pkce()
  const valid = {
    response_type: 'code',
    client_id: SPA.clientId,
    redirect_uri: SPA.redirectUri,
    scope: 'read',
    state: 'st@te with spaces/ünïcode+&=?',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }

  beforeAll(async () => {
    tmp = tempDir()
    issuer = await startIssuer({
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      vars: { PASSWORD_MAX_FAILURES: '3' },
    })
  })
  afterAll(async () => {
    await issuer.close()
    tmp.remove()
  })

  it('shows a login page naming the tenant and client, with protective headers', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const { headers, text } = page.response
    expect(headers['content-type']).toBe('text/html; charset=utf-8')
    expect(headers['x-frame-options']).toBe('DENY')
    expect(headers['cache-control']).toBe('no-store')
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(headers['content-security-policy']).toContain("default-src 'none'")
    expect(headers['content-security-policy']).toContain("form-action 'self' http://localhost:9000")
    expect(page.cookie).toMatch(/^tessera_login=/)
    expect(headers['set-cookie']?.[0]).toMatch(/httponly/i)
    expect(headers['set-cookie']?.[0]).toMatch(/samesite=lax/i)
    expect(text).toContain('<label for="username">')
    expect(text).toContain('<label for="password">')
    expect(text).toContain('Test SPA')
    expect(text).toContain('<strong>hs</strong>')
    expect(text).not.toContain('<script')
  })

  it.each([
    ['an unknown client', { client_id: '99999999-9999-4999-8999-999999999999' }],
    ['a missing client_id', { client_id: undefined }],
    ['a missing redirect_uri', { redirect_uri: undefined }],
    ['a redirect_uri with an extra path', { redirect_uri: `${SPA.redirectUri}/extra` }],
    ['a redirect_uri with an extra query', { redirect_uri: `${SPA.redirectUri}?x=1` }],
    ['a redirect_uri with a fragment', { redirect_uri: `${SPA.redirectUri}#frag` }],
    ['a redirect_uri of another client', { redirect_uri: 'http://localhost:9000/cb2?tenant=hs&x' }],
  ])('answers %s with a 400 page and never redirects', async (_name, change) => {
    const res = await send(issuer.url, {
      path: authorizePath({ ...valid, ...change }),
      host: HS.host,
    })
    expect(res.status).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.text).toContain('Cannot sign in')
  })

  it.each([
    ['the implicit grant', { response_type: 'token' }, 'unsupported_response_type'],
    ['a missing response_type', { response_type: undefined }, 'invalid_request'],
    [
      'a public client without PKCE',
      { code_challenge: undefined, code_challenge_method: undefined },
      'invalid_request',
    ],
    ['the plain PKCE method', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a challenge without a method', { code_challenge_method: undefined }, 'invalid_request'],
    ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['a scope outside the client', { scope: 'read admin' }, 'invalid_scope'],
    [
      'a client without the code grant',
      { client_id: HS.publicPasswordClient },
      'unauthorized_client',
    ],
  ])('redirects %s back with error, state and iss', async (_name, change, error) => {
    const res = await send(issuer.url, {
      path: authorizePath({ ...valid, ...change }),
      host: HS.host,
    })
    expect(res.status).toBe(303)
    const location = new URL(res.headers.location!)
    expect(location.origin + location.pathname).toBe(SPA.redirectUri)
    expect(location.searchParams.get('error')).toBe(error)
    expect(location.searchParams.get('error_description')).toBeTruthy()
    expect(location.searchParams.get('state')).toBe(valid.state)
    expect(location.searchParams.get('iss')).toBe(HS.issuer)
  })

  it('signs in and redirects with code, the exact state and iss', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.status).toBe(303)
    expect(res.headers['cache-control']).toBe('no-store')
    const location = new URL(res.headers.location!)
    expect(location.origin + location.pathname).toBe(SPA.redirectUri)
    expect(location.searchParams.get('state')).toBe(valid.state)
    expect(location.searchParams.get('iss')).toBe(HS.issuer)
    // 256 random bits, base64url.
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('keeps a registered query in the redirect_uri', async () => {
    const page = await openLogin(issuer.url, HS.host, {
      ...valid,
      redirect_uri: 'http://localhost:9000/cb2?tenant=hs',
    })
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.headers.location).toMatch(/^http:\/\/localhost:9000\/cb2\?tenant=hs&code=/)
  })

  it('gives the same message for a wrong password and an unknown user, and keeps working', async () => {
    const messages: string[] = []
    for (const username of ['bob', 'nobody-by-this-name']) {
      const page = await openLogin(issuer.url, HS.host, valid)
      const res = await submitLogin(
        issuer.url,
        HS.host,
        { csrf_token: page.csrfToken, username, password: 'wrong' },
        page.cookie,
      )
      expect(res.status).toBe(400)
      messages.push(/role="alert">([^<]*)</.exec(res.text)?.[1] ?? '')
      // The page comes back with a fresh form that works.
      const retry = readLoginPage(res)
      expect(retry.csrfToken).not.toBe(page.csrfToken)
    }
    expect(messages).toEqual(['Invalid username or password.', 'Invalid username or password.'])
  })

  it('refuses a missing CSRF token and a reused one', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const missing = await submitLogin(
      issuer.url,
      HS.host,
      { username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(missing.status).toBe(400)
    expect(missing.headers.location).toBeUndefined()
    expect(missing.text).toContain('missing its CSRF token')

    const fields = { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' }
    expect((await submitLogin(issuer.url, HS.host, fields, page.cookie)).status).toBe(303)
    const reused = await submitLogin(issuer.url, HS.host, fields, page.cookie)
    expect(reused.status).toBe(400)
    expect(reused.headers.location).toBeUndefined()
    expect(reused.text).toContain('expired or was already used')
  })

  it('refuses a form submitted from another browser (no or another binding cookie)', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const other = await openLogin(issuer.url, HS.host, valid)
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      other.cookie,
    )
    expect(res.status).toBe(400)
    expect(res.text).toContain('another browser session')
  })

  it('throttles failed sign-ins like the password grant: 429 with Retry-After', async () => {
    let page = await openLogin(issuer.url, HS.host, valid)
    for (let i = 0; i < 3; i++) {
      const res = await submitLogin(
        issuer.url,
        HS.host,
        { csrf_token: page.csrfToken, username: 'carol', password: 'wrong' },
        page.cookie,
      )
      expect(res.status).toBe(400)
      page = readLoginPage(res)
    }
    const locked = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'carol', password: 'wrong' },
      page.cookie,
    )
    expect(locked.status).toBe(429)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0)
    expect(locked.text).toContain('Too many failed attempts')
  })

  it('refuses PUT with 405', async () => {
    const res = await send(issuer.url, { method: 'PUT', path: '/authorize', host: HS.host })
    expect(res.status).toBe(405)
  })
})
